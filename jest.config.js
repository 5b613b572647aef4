/** Unit tests (pure core) and end-to-end tests (packaged app in the real engine) share one runner. */

/**
 * `HERMES_ENGINE=1.58` (npm run test:engine-1.58) runs the end-to-end tests on Apps-Engine 1.58.0,
 * the oldest engine app.json declares (Rocket.Chat 7.13): the rig's and tests' engine imports
 * resolve to the `@rocket.chat/apps-engine-1.58` package, and rig/environment.ts gives the engine
 * 1.58's Deno (scripts/prepare-engine.mjs). The app is still built against the 1.62.0
 * definitions (test/globalSetup.js packages it once, as for any server). Every e2e file runs there.
 */
const engine158 = process.env.HERMES_ENGINE === '1.58';

module.exports = {
    preset: 'ts-jest',
    testEnvironment: 'node',
    roots: ['<rootDir>/test'],
    testMatch: ['**/*.test.ts'],
    // One engine per end-to-end file; two workers fit CI's two cores.
    maxWorkers: 2,
    testTimeout: 30000,
    transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
    globalSetup: '<rootDir>/test/globalSetup.js',
    ...(engine158 && { moduleNameMapper: { '^@rocket\\.chat/apps-engine/(.*)$': '<rootDir>/node_modules/@rocket.chat/apps-engine-1.58/$1' } }),
};
