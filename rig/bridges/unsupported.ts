/**
 * A bridge the app does not use. Any call fails loudly with the bridge and method named, so a
 * test that starts relying on one shows exactly which in-memory bridge is still missing.
 */
export function unsupportedBridge<T>(name: string): T {
    return new Proxy(
        {},
        {
            get(_target, property) {
                if (property === 'then' || typeof property === 'symbol') {
                    return undefined;
                }
                return () => {
                    throw new Error(`The test rig has no ${name} bridge (called ${String(property)})`);
                };
            },
        },
    ) as T;
}
