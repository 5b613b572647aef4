// The message composer: Enter sends, Shift+Enter breaks the line, and a completion list for
// `@username` (the room's members) and `/command` (the slash commands and their sub-commands),
// driven by the keyboard (↑ ↓ to move, Enter or Tab to take, Esc to close) or the mouse.
import { el } from './dom.js';

let lists = 0;

/**
 * `form` holds a textarea and a send button; `sources()` gives `{ members, commands }` for the
 * room in view; `onSend(text)` posts (and may throw, the text then stays).
 */
export function composer(form, sources, onSend) {
    const input = form.querySelector('textarea');
    const listId = `completions-${++lists}`;
    const list = el('ul', { id: listId, role: 'listbox', class: 'completions', hidden: true, 'aria-label': 'Suggestions' });
    form.append(list);
    input.setAttribute('role', 'combobox');
    input.setAttribute('aria-autocomplete', 'list');
    input.setAttribute('aria-controls', listId);
    input.setAttribute('aria-expanded', 'false');
    let items = [];
    let active = 0;
    let token = null;

    const close = () => {
        items = [];
        list.hidden = true;
        input.setAttribute('aria-expanded', 'false');
        input.removeAttribute('aria-activedescendant');
    };

    const show = () => {
        list.replaceChildren(
            ...items.map((item, i) => {
                const option = el(
                    'li',
                    { id: `${listId}-${i}`, role: 'option', 'aria-selected': String(i === active) },
                    el('strong', {}, item.label),
                    item.hint ? el('span', { class: 'hint-text' }, ` ${item.hint}`) : '',
                );
                option.addEventListener('mousedown', (e) => {
                    e.preventDefault();
                    take(i);
                });
                return option;
            }),
        );
        list.hidden = items.length === 0;
        input.setAttribute('aria-expanded', String(items.length > 0));
        if (items.length) {
            input.setAttribute('aria-activedescendant', `${listId}-${active}`);
        }
    };

    /** What is being completed at the caret: `@name`, a `/command` at the start, or a command's sub-command. */
    const update = () => {
        const before = input.value.slice(0, input.selectionStart);
        const { members, commands } = sources();
        let m;
        if ((m = /(^|\s)@([\w.-]*)$/.exec(before))) {
            token = { start: before.length - m[2].length - 1, end: before.length };
            items = members.filter((u) => u.toLowerCase().startsWith(m[2].toLowerCase())).map((u) => ({ label: `@${u}`, insert: `@${u} ` }));
        } else if ((m = /^\/(\S*)$/.exec(before))) {
            token = { start: 0, end: before.length };
            items = commands.filter((c) => c.command.startsWith(m[1])).map((c) => ({ label: `/${c.command}`, hint: c.description, insert: `/${c.command} ` }));
        } else if ((m = /^\/(\S+) (\S*)$/.exec(before))) {
            const command = commands.find((c) => c.command === m[1]);
            token = { start: before.length - m[2].length, end: before.length };
            items = (command?.subcommands ?? []).filter((s) => s.name.startsWith(m[2])).map((s) => ({ label: s.name, hint: s.usage, insert: `${s.name} ` }));
        } else {
            items = [];
        }
        active = 0;
        items = items.slice(0, 12);
        show();
    };

    const take = (i) => {
        const item = items[i];
        if (!item || !token) {
            return;
        }
        input.value = input.value.slice(0, token.start) + item.insert + input.value.slice(token.end);
        const caret = token.start + item.insert.length;
        input.setSelectionRange(caret, caret);
        close();
        input.focus();
        update();
    };

    const send = async () => {
        const text = input.value.trim();
        if (!text) {
            return;
        }
        try {
            await onSend(text);
            input.value = '';
            close();
        } catch {
            // onSend reported it; the text stays for another try.
        }
    };

    input.addEventListener('input', update);
    // Closed when the focus went elsewhere (not when the window itself lost focus for a moment).
    input.addEventListener('blur', () => setTimeout(() => document.activeElement !== input && close(), 100));
    input.addEventListener('keydown', (e) => {
        if (items.length && (e.key === 'ArrowDown' || e.key === 'ArrowUp')) {
            e.preventDefault();
            active = (active + (e.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length;
            show();
        } else if (items.length && (e.key === 'Tab' || e.key === 'Enter') && !e.shiftKey) {
            e.preventDefault();
            // Enter on a word already typed in full sends the message instead.
            const typed = token ? input.value.slice(token.start, token.end) : '';
            if (e.key === 'Enter' && items.some((item) => item.insert.trim() === typed)) {
                close();
                void send();
            } else {
                take(active);
            }
        } else if (items.length && e.key === 'Escape') {
            e.preventDefault();
            close();
        } else if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            void send();
        }
    });
    form.addEventListener('submit', (e) => {
        e.preventDefault();
        void send();
    });
    return { focus: () => input.focus() };
}
