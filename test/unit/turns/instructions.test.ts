import { CITE_LINE, instructionsFor } from '../../../src/turns/turn';

describe('instructionsFor', () => {
    it('adds the citation rule only while the MCP server is on', () => {
        expect(instructionsFor('You are Hermes.', { mcpEnabled: false })).toBe('You are Hermes.');
        expect(instructionsFor('You are Hermes.', { mcpEnabled: true })).toBe(`You are Hermes.\n${CITE_LINE}`);
        expect(CITE_LINE).toBe('When you use messages read with the Rocket.Chat workspace tools, cite each one by its permalink.');
    });
});
