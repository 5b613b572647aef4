// One helper to build elements: el('button', { class: 'x', type: 'button' }, 'label', child).
// `html` sets innerHTML (only ever with markdown.js output, which escapes its input).

export function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
        if (value === undefined || value === null || value === false) {
            continue;
        }
        if (key === 'html') {
            node.innerHTML = value;
        } else if (key === 'class') {
            node.className = value;
        } else if (value === true) {
            node.setAttribute(key, '');
        } else {
            node.setAttribute(key, String(value));
        }
    }
    node.append(...children.filter((c) => c !== undefined && c !== null && c !== false));
    return node;
}

export function timeOf(ms) {
    return new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}
