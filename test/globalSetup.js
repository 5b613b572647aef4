// Builds the app package once before any test file runs: the end-to-end tests install
// exactly the zip that `npm run package` produces, never the sources.
module.exports = async () => {
    const { packageApp } = await import('../scripts/package.mjs');
    process.env.HERMES_APP_ZIP = await packageApp({ quiet: true });
};
