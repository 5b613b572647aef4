// Builds the app package once before any test file runs: the end-to-end tests install
// exactly the zip that `npm run package` produces, never the sources. HERMES_APP_ZIP set
// beforehand runs the tests against that package instead (an older build, to show a test
// fails without its fix).
module.exports = async () => {
    if (process.env.HERMES_APP_ZIP) {
        return;
    }
    const { packageApp } = await import('../scripts/package.mjs');
    process.env.HERMES_APP_ZIP = await packageApp({ quiet: true });
};
