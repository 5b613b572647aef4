import { offeredChoices, parseApprovalValue, textDecision } from '../../../src/approvals/approvalPolicy';
import { approvalButtons, commandFullyShown, codeBlock, decidedText, fullCommandView, timedOutText, visibleCommand } from '../../../src/approvals/approvalView';
import { ApprovalRequest } from '../../../src/hermes/runs';

/** The edges of the approval's policy and texts that the prompt's own tests do not reach. */

const req = (command: string, over: Partial<ApprovalRequest> = {}): ApprovalRequest => ({
    command,
    description: 'why',
    choices: ['once', 'session', 'always', 'deny'],
    allowPermanent: true,
    ...over,
});
const room = { isDirect: false, askerId: 'U1', adminUserIds: ['ADMIN'] };

describe('the choices offered', () => {
    it('are Approve once and Deny when Hermes names none', () => {
        expect(offeredChoices(req('ls', { choices: [] }), room)).toEqual(['once', 'deny']);
    });

    it('leave out what the app does not know', () => {
        expect(offeredChoices(req('ls', { choices: ['once', 'forever', 'deny'] }), room)).toEqual(['once', 'deny']);
    });

    it('keep "always" only in an admin’s own DM, and only when Hermes allows it', () => {
        const adminDm = { isDirect: true, askerId: 'ADMIN', adminUserIds: ['ADMIN'] };
        expect(offeredChoices(req('ls'), adminDm)).toEqual(['once', 'session', 'always', 'deny']);
        expect(offeredChoices(req('ls', { allowPermanent: false }), adminDm)).toEqual(['once', 'session', 'deny']);
        expect(offeredChoices(req('ls'), { ...adminDm, askerId: 'U1' })).toEqual(['once', 'session', 'deny']);
    });
});

describe('a button value', () => {
    it('reads back as the turn, the choice and whether the whole command was seen', () => {
        expect(parseApprovalValue('T1|once')).toEqual({ turnId: 'T1', choice: 'once', seenFull: false });
        expect(parseApprovalValue('T1|deny|full')).toEqual({ turnId: 'T1', choice: 'deny', seenFull: true });
        expect(parseApprovalValue(`${'x'.repeat(100)}|show`)).toEqual({ turnId: 'x'.repeat(100), choice: 'show', seenFull: false });
    });

    it('is refused when it is anything else', () => {
        for (const value of [undefined, '', 'T1', 'T1|maybe', 'T1|once|full|more', `${'x'.repeat(101)}|once`, '|once', 'T1|once|fully', 'a|b|once']) {
            expect(parseApprovalValue(value)).toBeUndefined();
        }
    });
});

describe('a typed decision', () => {
    it('is yes or no in their short and command forms, whatever the case and the blanks around', () => {
        expect(['yes', ' YES ', 'y', '/approve', '!approve'].map(textDecision)).toEqual(['once', 'once', 'once', 'once', 'once']);
        expect(['no', ' No\n', 'n', '/deny', '!DENY'].map(textDecision)).toEqual(['deny', 'deny', 'deny', 'deny', 'deny']);
    });

    it('is nothing else', () => {
        expect(['yes please', 'nope', '', 'deny', 'approve'].map(textDecision)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    });
});

describe('the approval message', () => {
    it('marks Approve once as the primary button and Deny as the dangerous one', () => {
        const view = approvalButtons('T1', req('ls'), 'alice', ['once', 'session', 'deny']);
        expect(view.buttons.map((b) => [b.label, b.style])).toEqual([
            ['Approve once', 'primary'],
            ['Approve for this session', undefined],
            ['Deny', 'danger'],
        ]);
    });

    it('says "—" when Hermes gives no description', () => {
        expect(approvalButtons('T1', req('ls', { description: '' }), 'alice', ['deny']).text).toContain('\n> —\n');
    });

    it('shows a command of 1,500 characters whole, and cuts one of 1,501 with the count of what is hidden', () => {
        expect(commandFullyShown(req('x'.repeat(1_500)))).toBe(true);
        expect(commandFullyShown(req('x'.repeat(1_501)))).toBe(false);
        const cut = approvalButtons('T1', req('x'.repeat(1_501)), 'alice', ['once', 'deny']);
        expect(cut.text).toContain('1 more characters are not shown');
        expect(cut.buttons.map((b) => b.label)).toEqual(['Deny', 'Show full command']);
    });

    it('never offers Approve for an empty command or one it could not read', () => {
        expect(commandFullyShown(req(''))).toBe(false);
        expect(commandFullyShown(req('ls'), true)).toBe(false);
        expect(commandFullyShown(req('ls'))).toBe(true);
    });

    it('fences a command with a fence longer than any backtick run in it', () => {
        expect(codeBlock('a ``` b')).toBe('````\na ``` b\n````');
        expect(codeBlock('plain')).toBe('```\nplain\n```');
    });

    it('shows Windows line ends as plain ones', () => {
        expect(visibleCommand('a\r\nb\rc')).toBe('a\nb\nc');
    });
});

describe('the whole command, for who asked to see it', () => {
    it('has the same styles, and values that say it was seen whole', () => {
        const view = fullCommandView('T1', req('ls'), ['once', 'session', 'deny']);
        expect(view.buttons.map((b) => [b.value, b.style])).toEqual([
            ['T1|once|full', 'primary'],
            ['T1|session|full', undefined],
            ['T1|deny|full', 'danger'],
        ]);
    });
});

describe('the decided and timed-out texts', () => {
    it('name the command by its first line, backticks made plain, and say when there is more', () => {
        expect(decidedText(req('echo `id`\nrm -rf /'), 'alice', 'once')).toBe(":white_check_mark: `echo 'id' …` — Approve once by @alice.");
        expect(decidedText(req('ls'), 'bob', 'session')).toBe(':white_check_mark: `ls` — Approve for this session by @bob.');
        expect(timedOutText(req('ls'))).toBe(':hourglass: The approval for `ls` timed out; Hermes did not run it.');
    });

    it('an unknown choice is said as Approve once; an unknown command as unreadable', () => {
        expect(decidedText(req('ls'), 'bob', 'whatever')).toBe(':white_check_mark: `ls` — Approve once by @bob.');
        expect(timedOutText(req(''))).toBe(
            ':hourglass: The approval for _(the command could not be read after the app restarted: only Deny is offered)_ timed out; Hermes did not run it.',
        );
    });
});
