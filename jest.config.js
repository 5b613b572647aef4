/** Unit tests (pure core) and end-to-end tests (packaged app in the real engine) share one runner. */
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
};
