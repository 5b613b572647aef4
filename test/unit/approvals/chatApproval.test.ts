import { chatApprovalIn } from '../../../src/approvals/chatApproval';

/** The answer Hermes v0.18.2 streams over chat completions for a command that needs approval (transcript 30, cut off as recorded). */
const RECORDED =
    '\n\nTOOL_RESULT_SEEN: {"output": "", "exit_code": -1, "error": "", "status": "pending_approval", "approval_pending": true, "command": "rm -rf <HERMES_TEST_HOME>/scratch", "description": "delete in root path", "pattern_key": ';

describe('chatApprovalIn', () => {
    it('finds the pending approval in the recorded answer, with its command and description', () => {
        expect(chatApprovalIn(RECORDED)).toEqual({ command: 'rm -rf <HERMES_TEST_HOME>/scratch', description: 'delete in root path' });
    });

    it('decodes escapes in the command, and leaves out a field cut off or empty', () => {
        expect(chatApprovalIn('{"approval_pending":true,"command":"echo \\"hi\\"\\nrm x","description":""}')).toEqual({ command: 'echo "hi"\nrm x' });
        expect(chatApprovalIn('{"approval_pending": true, "command": "rm -rf /sr')).toEqual({});
    });

    it('is nothing for an ordinary answer, one that only talks about approvals, or a result that is not pending', () => {
        expect(chatApprovalIn('The build passed.')).toBeUndefined();
        expect(chatApprovalIn('Set "approval_pending" to true in your config.')).toBeUndefined();
        expect(chatApprovalIn('{"approval_pending": false, "command": "ls"}')).toBeUndefined();
    });
});
