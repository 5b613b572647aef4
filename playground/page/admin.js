// The Admin view: the app's settings form, generated from the settings the app declares (type,
// choices, labels and descriptions from its i18n/en.json), and the app's log as an admin reads it.
import { get, post } from './api.js';
import { el } from './dom.js';

function control(setting, id, describedBy) {
    const common = { id, name: setting.id, 'aria-describedby': describedBy, required: setting.required && setting.type !== 'password' };
    switch (setting.type) {
        case 'boolean':
            return el('input', { ...common, type: 'checkbox', checked: setting.value === true, required: false });
        case 'int':
            return el('input', { ...common, type: 'number', value: setting.value, inputmode: 'numeric' });
        case 'select':
            return el('select', common, ...setting.values.map((v) => el('option', { value: v.key, selected: v.key === setting.value }, v.label)));
        case 'password':
            return el('input', { ...common, type: 'password', autocomplete: 'off', placeholder: setting.isSet ? 'set (leave empty to keep)' : 'not set' });
        case 'code': {
            const area = el('textarea', { ...common, rows: 4, spellcheck: 'false' });
            area.value = setting.value ?? '';
            return area;
        }
        default:
            return setting.multiline
                ? Object.assign(el('textarea', { ...common, rows: 3 }), { value: setting.value ?? '' })
                : el('input', { ...common, type: 'text', value: setting.value ?? '', placeholder: setting.placeholder });
    }
}

function valueOf(setting, input) {
    if (setting.type === 'boolean') {
        return input.checked;
    }
    if (setting.type === 'int') {
        return Number(input.value);
    }
    return input.value;
}

export function adminView(root, toast) {
    const form = root.querySelector('#settings-form');
    const fields = root.querySelector('#settings-fields');
    const log = root.querySelector('#app-log');
    let settings = [];
    let timer;

    const refreshLog = async () => {
        const { log: text } = await get('admin');
        const atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
        log.textContent = text || '(nothing yet)';
        if (atEnd) {
            log.scrollTop = log.scrollHeight;
        }
    };

    const load = async () => {
        const data = await get('admin');
        settings = data.settings;
        fields.replaceChildren(
            ...settings.map((s) => {
                const id = `setting-${s.id}`;
                const descId = `${id}-description`;
                const input = control(s, id, s.description ? descId : undefined);
                const label = el('label', { for: id }, s.label, s.required ? el('span', { 'aria-hidden': 'true' }, ' *') : '');
                const field = el('div', { class: `setting setting-${s.type}` }, ...(s.type === 'boolean' ? [input, label] : [label, input]));
                if (s.description) {
                    field.append(el('p', { id: descId, class: 'description' }, s.description, el('code', { class: 'setting-id' }, ` ${s.id}`)));
                }
                return field;
            }),
        );
        log.textContent = data.log || '(nothing yet)';
    };

    form.addEventListener('submit', async (e) => {
        e.preventDefault();
        const values = {};
        for (const s of settings) {
            values[s.id] = valueOf(s, form.elements.namedItem(s.id));
        }
        try {
            const { changed } = await post('admin', { values });
            toast(changed.length ? `Saved: ${changed.join(', ')}` : 'Nothing changed');
            await load();
        } catch (error) {
            toast(`Not saved: ${error.message}`, true);
        }
    });
    root.querySelector('#refresh-log').addEventListener('click', () => void refreshLog());

    return {
        show: async () => {
            await load();
            // The log is read again every 2 s while the view is open, as a tail.
            timer = setInterval(() => void refreshLog().catch(() => undefined), 2000);
        },
        hide: () => clearInterval(timer),
    };
}
