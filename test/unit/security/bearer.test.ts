import { bearerMatches } from '../../../src/security/bearer';

/** The MCP server's caller check: `Bearer <secret>`, exactly, compared in constant time. */
describe('bearerMatches', () => {
    const SECRET = 'mcp-secret-0123456789abcdef-0123456789abcdef';
    it.each<[string | undefined, boolean]>([
        [`Bearer ${SECRET}`, true],
        [`Bearer ${SECRET}x`, false],
        [`Bearer ${SECRET.slice(0, -1)}`, false],
        [`bearer ${SECRET}`, false],
        [`Basic ${SECRET}`, false],
        [`xBearer ${SECRET}`, false],
        [`Bearer  ${SECRET}`, false],
        [`Bearer ${SECRET} extra`, false],
        [SECRET, false],
        ['Bearer ', false],
        ['', false],
        [undefined, false],
    ])('%j → %j', (header, ok) => {
        expect(bearerMatches(header, SECRET)).toBe(ok);
    });

    it('an empty secret matches nothing', () => {
        expect(bearerMatches('Bearer x', '')).toBe(false);
    });
});
