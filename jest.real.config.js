/**
 * `npm run test:real-hermes`: the real-server tests (test/real/*.real.ts) against a running
 * Hermes `api_server`; see test/real/realHermes.real.ts. One file, one engine, in band.
 */
const base = require('./jest.config.js');

module.exports = { ...base, testMatch: ['**/test/real/*.real.ts'], maxWorkers: 1, testTimeout: 60000 };
