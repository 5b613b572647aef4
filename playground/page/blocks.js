// UIKit blocks to DOM, for messages, modals and the contextual bar: section, actions, context,
// divider, input, image. `on.action({ actionId, value, blockId })` is a button click or a pick
// in a select outside an input block; input blocks keep their values for a submit (readState).
import { el } from './dom.js';
import { escapeHtml, markdown } from './markdown.js';

function textHtml(text) {
    if (!text) {
        return '';
    }
    if (typeof text === 'string') {
        return escapeHtml(text);
    }
    return text.type === 'mrkdwn' ? markdown(text.text) : escapeHtml(text.text ?? '');
}

function plain(text) {
    return typeof text === 'string' ? text : (text?.text ?? '');
}

function button(element, block, on) {
    const b = el('button', { type: 'button', class: `uikit-button ${element.style ?? ''}`.trim(), 'data-action': element.actionId }, plain(element.text));
    b.addEventListener('click', () => on.action({ actionId: element.actionId, value: element.value, blockId: block.blockId }));
    return b;
}

function select(element, block, on, id) {
    const s = el('select', { id, 'data-action': element.actionId });
    if (element.placeholder && !element.initialValue) {
        s.append(el('option', { value: '' }, plain(element.placeholder)));
    }
    for (const option of element.options ?? []) {
        s.append(el('option', { value: option.value, selected: option.value === (element.initialValue ?? element.initialOption?.value) }, plain(option.text)));
    }
    if (on) {
        s.addEventListener('change', () => on.action({ actionId: element.actionId, value: s.value, blockId: block.blockId }));
    }
    return s;
}

function element(element, block, on) {
    switch (element.type) {
        case 'button':
            return button(element, block, on);
        case 'static_select':
            return select(element, block, on, undefined);
        case 'image':
            return el('img', { src: element.imageUrl, alt: element.altText ?? '' });
        case 'overflow': {
            const wrap = el('span', { class: 'overflow' });
            for (const option of element.options ?? []) {
                wrap.append(button({ ...option, type: 'button', actionId: element.actionId }, block, on));
            }
            return wrap;
        }
        default:
            return el('span', { class: 'uikit-text', html: textHtml(element) || textHtml(element.text) });
    }
}

let inputs = 0;

function input(block, errors) {
    const id = `uikit-input-${++inputs}`;
    const e = block.element ?? {};
    const field = el('div', { class: 'uikit-input' }, el('label', { for: id }, plain(block.label)));
    let control;
    if (e.type === 'static_select') {
        control = select(e, block, undefined, id);
    } else if (e.type === 'plain_text_input') {
        control = el(e.multiline ? 'textarea' : 'input', { id, placeholder: plain(e.placeholder), rows: e.multiline ? 3 : undefined });
        control.value = e.initialValue ?? '';
    } else {
        control = el('input', { id });
        control.value = e.initialValue ?? '';
    }
    control.dataset.block = block.blockId ?? '';
    control.dataset.action = e.actionId ?? '';
    control.classList.add('uikit-field');
    field.append(control);
    const error = errors?.[block.blockId] ?? errors?.[e.actionId];
    if (error) {
        const errorId = `${id}-error`;
        control.setAttribute('aria-invalid', 'true');
        control.setAttribute('aria-describedby', errorId);
        field.append(el('p', { class: 'uikit-error', id: errorId, role: 'alert' }, error));
    }
    return field;
}

export function renderBlocks(blocks, on, errors) {
    const root = el('div', { class: 'uikit' });
    for (const block of blocks ?? []) {
        switch (block.type) {
            case 'section': {
                const section = el('div', { class: 'uikit-section' }, el('div', { class: 'uikit-text', html: textHtml(block.text) }));
                for (const field of block.fields ?? []) {
                    section.append(el('div', { class: 'uikit-field-text', html: textHtml(field) }));
                }
                if (block.accessory) {
                    section.append(element(block.accessory, block, on));
                }
                root.append(section);
                break;
            }
            case 'actions':
                root.append(el('div', { class: 'uikit-actions' }, ...(block.elements ?? []).map((e) => element(e, block, on))));
                break;
            case 'context':
                root.append(el('div', { class: 'uikit-context' }, ...(block.elements ?? []).map((e) => element(e, block, on))));
                break;
            case 'divider':
                root.append(el('hr'));
                break;
            case 'image':
                root.append(el('img', { src: block.imageUrl, alt: block.altText ?? '' }));
                break;
            case 'input':
                root.append(input(block, errors));
                break;
            default:
                if (block.text) {
                    root.append(el('div', { class: 'uikit-text', html: textHtml(block.text) }));
                }
        }
    }
    return root;
}

/** The values of a surface's input fields, as the web client sends them: `{ [blockId]: { [actionId]: value } }`. */
export function readState(root) {
    const state = {};
    for (const field of root.querySelectorAll('.uikit-field')) {
        const { block, action } = field.dataset;
        if (block && action) {
            state[block] = { ...(state[block] ?? {}), [action]: field.value };
        }
    }
    return state;
}
