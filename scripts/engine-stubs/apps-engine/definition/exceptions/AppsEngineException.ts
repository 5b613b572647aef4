// Stand-in for the engine's `src/definition/exceptions/AppsEngineException.ts`, which the npm
// package does not ship. handlers/app/handleUploadEvents.ts is the only ES *value* import from
// `@rocket.chat/apps-engine/` in the 1.62.0 runtime (all others are `import type`, which Deno
// skips, or go through lib/require.ts at run time).
//
// Rather than redefining the class, re-export the compiled one the runtime's own require()
// loads (same path rewrite as deno-runtime/lib/require.ts), so it is the very class apps throw.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const compiled = fileURLToPath(import.meta.resolve('@rocket.chat/apps-engine/definition/exceptions/AppsEngineException.js')).replace(
    'apps-engine/src/',
    'apps-engine/',
);

export const { AppsEngineException } = createRequire(import.meta.url)(compiled) as {
    AppsEngineException: (new (message?: string) => Error) & { JSONRPC_ERROR_CODE: number };
};
