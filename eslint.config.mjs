// Lint for the whole project (`npm run lint`, part of `npm test`): typescript-eslint's
// recommended rules, Prettier for layout, and the project's own boundary: outside
// src/engine/ and HermesApp.ts nothing imports a value from the Apps-Engine (types only,
// written `import type`), so the core stays plain TypeScript over ports. App code imports npm
// packages and JSON only through src/generated/ (scripts/generate.mjs): the engine's sandbox
// refuses npm packages and `rc-apps package` cannot resolve JSON imports.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

const generatedOnly = 'The Apps-Engine sandbox refuses npm packages: import the pre-bundled module from src/generated/ (scripts/generate.mjs).';
const appImports = {
    paths: [
        { name: 'zod', allowTypeImports: true, message: generatedOnly },
        { name: 'jsonwebtoken', allowTypeImports: true, message: generatedOnly },
    ],
    patterns: [{ group: ['*.json'], message: '`rc-apps package` cannot resolve JSON imports: generate a module (scripts/generate.mjs).' }],
};

export default tseslint.config(
    { ignores: ['node_modules/', 'dist/', 'build/', '.cache/', 'coverage/', 'reports/', '.stryker-tmp*/', 'bench/floor-app/dist/', 'src/generated/'] },
    js.configs.recommended,
    ...tseslint.configs.recommended,
    prettier,
    {
        languageOptions: { ecmaVersion: 2022, sourceType: 'module' },
        rules: {
            '@typescript-eslint/no-unused-vars': [
                'error',
                { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
            ],
            '@typescript-eslint/no-explicit-any': 'error',
            eqeqeq: ['error', 'always', { null: 'ignore' }],
            // The app strips control characters on purpose (forged markers, bidi overrides): its regexes name them.
            'no-control-regex': 'off',
            'no-console': 'error',
        },
    },
    {
        files: ['HermesApp.ts', 'src/engine/**/*.ts'],
        rules: { '@typescript-eslint/no-restricted-imports': ['error', appImports] },
    },
    {
        // One trust boundary: an entry point gets its ports only from the gate (src/engine/entry/gate.ts),
        // which checks the caller against the room, message and thread the request names.
        files: ['HermesApp.ts', 'src/**/*.ts', 'playground/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
        ignores: ['src/engine/entry/gate.ts', 'src/engine/callPorts.ts'],
        rules: {
            'no-restricted-syntax': [
                'error',
                {
                    selector: "MemberExpression[object.name='CallPorts'][property.name='open']",
                    message: 'Entry points get their ports from the gate (src/engine/entry/gate.ts), never CallPorts.open.',
                },
                {
                    selector: "CallExpression[callee.property.name='loadConfig']",
                    message: 'Entry points get the configuration from the gate (Gate.endpoint / Gate.person), never loadConfig.',
                },
            ],
        },
    },
    {
        files: ['src/**/*.ts'],
        ignores: ['src/engine/**'],
        rules: {
            '@typescript-eslint/no-restricted-imports': [
                'error',
                {
                    paths: appImports.paths,
                    patterns: [
                        {
                            group: ['@rocket.chat/apps-engine', '@rocket.chat/apps-engine/*'],
                            allowTypeImports: true,
                            message: 'Only src/engine/ and HermesApp.ts use the Apps-Engine; the core takes ports (import type is fine).',
                        },
                        ...appImports.patterns,
                    ],
                },
            ],
        },
    },
    {
        // The type check sees Jest's globals everywhere (tsconfig types): in the app, a name such as
        // `describe` must be its own import, never the test runner's, which the engine does not have.
        files: ['HermesApp.ts', 'src/**/*.ts'],
        rules: {
            'no-restricted-globals': [
                'error',
                ...['describe', 'it', 'test', 'expect', 'jest', 'beforeAll', 'beforeEach', 'afterAll', 'afterEach'].map((name) => ({
                    name,
                    message: 'A Jest global: the app runs without Jest; import the name it means.',
                })),
            ],
        },
    },
    {
        files: ['test/**/*.{ts,js}', 'bench/**/*.ts', 'scripts/**/*.{ts,mjs,js}', '*.js', '*.mjs'],
        languageOptions: {
            globals: {
                console: 'readonly',
                process: 'readonly',
                require: 'readonly',
                module: 'writable',
                __dirname: 'readonly',
                setTimeout: 'readonly',
                clearTimeout: 'readonly',
                setImmediate: 'readonly',
                setInterval: 'readonly',
                clearInterval: 'readonly',
                Buffer: 'readonly',
                URL: 'readonly',
                fetch: 'readonly',
                FormData: 'readonly',
                Blob: 'readonly',
            },
        },
        // Tests read untyped JSON from the wire and reach into fakes.
        rules: { 'no-console': 'off', '@typescript-eslint/no-require-imports': 'off', '@typescript-eslint/no-explicit-any': 'off' },
    },
    {
        // The playground's page: plain ES modules in the browser.
        files: ['playground/page/**/*.js'],
        languageOptions: {
            globals: Object.fromEntries(
                [
                    'document',
                    'location',
                    'history',
                    'fetch',
                    'EventSource',
                    'URL',
                    'URLSearchParams',
                    'setTimeout',
                    'clearTimeout',
                    'setInterval',
                    'clearInterval',
                ].map((name) => [name, 'readonly']),
            ),
        },
    },
    {
        // The playground's entry prints where it runs, like the scripts.
        files: ['playground/main.ts'],
        rules: { 'no-console': 'off' },
    },
);
