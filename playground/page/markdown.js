// Rocket.Chat-flavoured Markdown to HTML, small and safe: the text is HTML-escaped first and
// only the tags made here are added. Block level: ``` code ```, > quotes, • / - / * lists.
// Inline: `code`, [text](https://…), bare links, *bold* / **bold**, _italic_, ~strike~, @mentions,
// and the :emoji: short codes the app writes.

const EMOJI = {
    warning: '⚠️',
    hourglass: '⌛',
    hourglass_flowing_sand: '⏳',
    stop_button: '⏹️',
    lock: '🔒',
    white_check_mark: '✅',
    sparkles: '✨',
    scissors: '✂️',
    no_entry_sign: '🚫',
    no_entry: '⛔',
    computer: '💻',
    x: '❌',
};

export function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

function link(url, label) {
    return `<a href="${url}" target="_blank" rel="noopener noreferrer">${label}</a>`;
}

export function inline(text) {
    const slots = [];
    // Finished HTML is parked in a slot so later patterns do not reach inside it.
    const keep = (html) => `\u0000${slots.push(html) - 1}\u0000`;
    let s = escapeHtml(text);
    s = s.replace(/`([^`\n]+)`/g, (_, code) => keep(`<code>${code}</code>`));
    s = s.replace(/\[([^\]\n]+)\]\((https?:\/\/[^)\s]+)\)/g, (_, label, url) => keep(link(url, label)));
    s = s.replace(/(^|[\s(])(https?:\/\/[^\s<]+)/g, (_, before, url) => before + keep(link(url, url)));
    s = s.replace(/\*\*([^*\n]+)\*\*/g, '<strong>$1</strong>');
    s = s.replace(/(^|[^\w*])\*([^*\n]+)\*(?!\w)/g, '$1<strong>$2</strong>');
    s = s.replace(/(^|[^\w])_([^_\n]+)_(?!\w)/g, '$1<em>$2</em>');
    s = s.replace(/(^|[^\w~])~([^~\n]+)~(?!\w)/g, '$1<del>$2</del>');
    s = s.replace(/(^|[^\w@/])@([\w.-]*\w)/g, '$1<span class="mention">@$2</span>');
    s = s.replace(/:([a-z_]+):/g, (whole, name) => EMOJI[name] ?? whole);
    return s.replace(/\u0000(\d+)\u0000/g, (_, i) => slots[Number(i)]);
}

/** Lines to blocks: paragraphs (lines kept), quotes and lists grouped. */
function blocks(text) {
    const out = [];
    let group = null;
    const close = () => {
        if (group) {
            out.push(
                group.kind === 'quote'
                    ? `<blockquote>${group.lines.map(inline).join('<br>')}</blockquote>`
                    : group.kind === 'list'
                      ? `<ul>${group.lines.map((l) => `<li>${inline(l)}</li>`).join('')}</ul>`
                      : `<p>${group.lines.map(inline).join('<br>')}</p>`,
            );
        }
        group = null;
    };
    for (const line of text.split('\n')) {
        const quote = /^(?:>|&gt;) ?(.*)$/.exec(line);
        const item = /^\s*[•\-*] (.*)$/.exec(line);
        const kind = quote ? 'quote' : item ? 'list' : line.trim() === '' ? 'blank' : 'para';
        if (kind === 'blank') {
            close();
            continue;
        }
        if (!group || group.kind !== kind) {
            close();
            group = { kind, lines: [] };
        }
        group.lines.push(quote ? quote[1] : item ? item[1] : line);
    }
    close();
    return out.join('');
}

export function markdown(text) {
    const parts = String(text ?? '').split(/```/);
    return parts.map((part, i) => (i % 2 === 1 ? `<pre><code>${escapeHtml(part.replace(/^\w*\n/, ''))}</code></pre>` : blocks(part))).join('');
}
