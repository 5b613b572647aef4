import { argumentsLine } from '../../../src/admission/textCommand';
import { serverArguments, slashCommandLine } from '../../../rig/slashCommandLine';

/**
 * The rig hands a slash command the arguments Rocket.Chat would: the web client sends the first
 * line after `/command` (apps/meteor/client/lib/chats/flows/processSlashCommand.ts) and the apps
 * commands bridge splits it with apps/meteor/lib/utils/parseParameters.ts.
 */
describe('what the server makes of a typed command line', () => {
    it.each<[string, string[]]>([
        ['cron add every 1h Ping --name "Daily standup"', ['cron', 'add', 'every', '1h', 'Ping', '--name', 'Daily standup']],
        ["Bob's and Carol's plan", ['Bobs and Carols', 'plan']],
        ["yesterday's incidents", ["yesterday's", 'incidents']],
        ['"a""b"', ['a', 'b']],
        ['x "" y', ['x', '', 'y']],
        ['  a   b  ', ['a', 'b']],
        ['a"b c"d', ['ab cd']],
        // A backslash before the opening quote does not stop the span from starting there.
        ['say \\"hi\\" "q \\" x" end', ['say', '\\hi" q', '\\ x', 'end']],
        ['no \\"span\\" here', ['no', '\\"span\\"', 'here']],
        ['tabs\tand\nnew', ['tabs', 'and', 'new']],
        ["'multi\nline' rest", ['multi\nline', 'rest']],
        ['Café ☕ "naïve résumé"', ['Café', '☕', 'naïve résumé']],
        ['   ', []],
    ])('%j → %j', (typed, args) => {
        expect(serverArguments(typed)).toEqual(args);
    });

    it('only the first line after the command is sent', () => {
        expect(slashCommandLine('/hermes title "Q3 plan"\nsecond line')).toEqual({ command: 'hermes', args: ['title', 'Q3 plan'] });
        expect(slashCommandLine('not a command')).toEqual({ command: '', args: [] });
    });
});

describe('argumentsLine: the app puts the line back together', () => {
    it('cron gets the quotes back where an argument had spaces', () => {
        expect(argumentsLine('cron', ['add', 'every', '1h', 'Ping', '--name', 'Daily standup'])).toBe('add every 1h Ping --name "Daily standup"');
        expect(argumentsLine('cron', ['add', 'x', '--name', 'say "hi" now'])).toBe(`add x --name 'say "hi" now'`);
        expect(argumentsLine('cron', ['a', `it's "both"`])).toBe(`a it's "both"`);
        expect(argumentsLine('cron', ['a', '', 'b'])).toBe('a "" b');
    });

    it("a background prompt keeps its quotes: they are the prompt's words", () => {
        expect(argumentsLine('background', ['summarize', 'Q3 plan', 'briefly'])).toBe('summarize "Q3 plan" briefly');
        expect(argumentsLine('background', ['why', 'it said "no"'])).toBe(`why 'it said "no"'`);
    });

    it('other commands take the words as the server grouped them, without quotes', () => {
        expect(argumentsLine('title', ['Q3 plan', 'review'])).toBe('Q3 plan review');
        expect(argumentsLine('search', ['kubernetes upgrade'])).toBe('kubernetes upgrade');
    });
});
