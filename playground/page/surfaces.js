// The app's modal (a <dialog>) and contextual bar (a side panel), drawn from the surfaces the
// person's client holds open. A surface redrawn with the same view keeps what was typed in it.
import { readState, renderBlocks } from './blocks.js';
import { el } from './dom.js';

function titleOf(view) {
    return typeof view.title === 'string' ? view.title : (view.title?.text ?? 'App');
}

/** Writes the values typed before a redraw back into the same fields. */
function restore(root, state) {
    for (const field of root.querySelectorAll('.uikit-field')) {
        const value = state[field.dataset.block]?.[field.dataset.action];
        if (value !== undefined) {
            field.value = value;
        }
    }
}

/** `send(op, view, extra)` posts a view interaction (op: submit, close, click). */
export function surfaces({ dialog, bar }, send) {
    let modalKey = '';
    let barKey = '';

    dialog.addEventListener('cancel', (e) => {
        // Esc: the client tells the app the modal was closed.
        e.preventDefault();
        const id = dialog.dataset.viewId;
        if (id) {
            void send('close', { id }, { values: readState(dialog) });
        }
    });

    const drawModal = (surface) => {
        const key = surface ? JSON.stringify([surface.view, surface.errors]) : '';
        if (key === modalKey) {
            return;
        }
        modalKey = key;
        if (!surface) {
            delete dialog.dataset.viewId;
            if (dialog.open) {
                dialog.close();
            }
            return;
        }
        const { view } = surface;
        const sameView = dialog.dataset.viewId === view.id;
        const typed = sameView ? readState(dialog) : {};
        const body = renderBlocks(view.blocks, { action: (a) => void send('click', view, a) }, surface.errors);
        const form = el('form', { method: 'dialog', class: 'modal-form' }, el('h2', { id: 'modal-title' }, titleOf(view)), body);
        const footer = el('div', { class: 'modal-footer' });
        const cancel = el('button', { type: 'button' }, view.close?.text?.text ?? 'Cancel');
        cancel.addEventListener('click', () => void send('close', view, { values: readState(dialog) }));
        footer.append(cancel);
        if (view.submit) {
            footer.append(el('button', { type: 'submit', class: 'primary' }, view.submit.text?.text ?? 'Submit'));
        }
        form.append(footer);
        form.addEventListener('submit', (e) => {
            e.preventDefault();
            void send('submit', view, { values: readState(dialog) });
        });
        dialog.replaceChildren(form);
        dialog.dataset.viewId = view.id;
        dialog.setAttribute('aria-labelledby', 'modal-title');
        restore(dialog, typed);
        if (!dialog.open) {
            dialog.showModal();
        }
        (dialog.querySelector('[aria-invalid="true"]') ?? dialog.querySelector('.uikit-field, button'))?.focus();
    };

    const drawBar = (surface) => {
        const key = surface ? JSON.stringify([surface.view, surface.errors]) : '';
        if (key === barKey) {
            return;
        }
        barKey = key;
        if (!surface) {
            bar.hidden = true;
            bar.replaceChildren();
            return;
        }
        const { view } = surface;
        const close = el('button', { type: 'button', class: 'close', 'aria-label': `Close ${titleOf(view)}` }, '×');
        close.addEventListener('click', () => void send('close', view, { values: readState(bar) }));
        bar.replaceChildren(
            el('header', {}, el('h2', { id: 'bar-title' }, titleOf(view)), close),
            renderBlocks(view.blocks, { action: (a) => void send('click', view, a) }, surface.errors),
        );
        bar.setAttribute('aria-labelledby', 'bar-title');
        bar.hidden = false;
    };

    return (list) => {
        drawModal(list.find((s) => s.type === 'modal'));
        drawBar(list.find((s) => s.type === 'contextualBar'));
    };
}
