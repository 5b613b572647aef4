// One message as the room shows it: avatar, name and time, the text (Markdown, with quoted
// messages shown as quotes) or the app's UIKit blocks, attachments, the thread summary and
// the message's actions. Private (ephemeral) messages are marked as only visible to you.
import { renderBlocks } from './blocks.js';
import { el, timeOf } from './dom.js';
import { markdown } from './markdown.js';

/** A link to a message of this server, as the app writes a quote: `[ ](https://…/channel/x?msg=ID)`. */
const QUOTE_LINK = /\[ \]\(([^)\s]*[?&]msg=([^)&\s]+)[^)\s]*)\)\s*/g;

function quoteOf(quoted, id) {
    if (!quoted) {
        return el('blockquote', { class: 'quote' }, el('span', { class: 'quote-missing' }, `Quoted message ${id}`));
    }
    return el(
        'blockquote',
        { class: 'quote', 'aria-label': `Quote of ${quoted.sender.username}` },
        el('div', { class: 'meta' }, el('strong', {}, quoted.sender.username), ' ', el('time', {}, timeOf(quoted.createdAt))),
        el('div', { class: 'text', html: markdown(quoted.text) }),
    );
}

function attachment(a) {
    return el(
        'div',
        { class: 'attachment', style: a.color ? `border-color: ${/^#?\w+$/.test(a.color) ? a.color : 'currentColor'}` : undefined },
        a.author_name ? el('strong', {}, a.author_name) : '',
        a.title ? el('div', { class: 'attachment-title' }, a.title) : '',
        a.text ? el('div', { class: 'text', html: markdown(a.text) }) : '',
        a.image_url ? el('img', { src: a.image_url, alt: a.description ?? a.title ?? 'image' }) : '',
        ...(a.fields ?? []).map((f) => el('div', { class: 'attachment-field' }, el('strong', {}, f.title), ' ', String(f.value))),
    );
}

/** The emoji the server knows (rig/reactions.ts), as the client draws them. */
const GLYPHS = {
    ':eyes:': '👀',
    ':hourglass_flowing_sand:': '⏳',
    ':hourglass:': '⌛',
    ':white_check_mark:': '✅',
    ':x:': '❌',
    ':thumbsup:': '👍',
    ':+1:': '👍',
    ':thumbsdown:': '👎',
    ':-1:': '👎',
    ':heart:': '❤️',
    ':tada:': '🎉',
    ':rocket:': '🚀',
    ':smile:': '😄',
};

/** The reactions under a message: one chip per emoji with its count; a click toggles yours. */
function reactionRow(m, ctx) {
    const row = el('div', { class: 'reactions', role: 'group', 'aria-label': 'Reactions' });
    for (const [name, { usernames }] of Object.entries(m.reactions ?? {})) {
        const chip = el(
            'button',
            {
                type: 'button',
                class: 'reaction',
                'data-reaction': name,
                'aria-pressed': String(usernames.includes(ctx.me.username)),
                title: `${usernames.join(', ')} reacted with ${name}`,
            },
            `${GLYPHS[name] ?? name} ${usernames.length}`,
        );
        chip.addEventListener('click', () => ctx.onReact(m, name));
        row.append(chip);
    }
    return row;
}

/**
 * `ctx`: { me, find(id), replies(id), inThread, actions (the message actions shown here),
 * onReply(message), onAction(action, message), onButton(message, action), onReact(message, emoji) }.
 */
export function messageItem(m, ctx) {
    const mine = m.sender.id === ctx.me.id;
    const classes = ['message', m.privateTo ? 'private' : '', m.sender.type === 'app' ? 'from-app' : '', mine ? 'mine' : '', m.t === 'rm' ? 'deleted' : ''];
    const meta = el(
        'div',
        { class: 'meta' },
        el('strong', { class: 'name' }, m.sender.name || m.sender.username),
        ' ',
        el('span', { class: 'username' }, `@${m.sender.username}`),
        m.sender.type === 'app' ? el('span', { class: 'badge' }, 'App') : '',
        ' ',
        el('time', { datetime: new Date(m.createdAt).toISOString() }, timeOf(m.createdAt)),
        m.editedAt && m.t !== 'rm' ? el('span', { class: 'edited', title: `edited ${timeOf(m.editedAt)}` }, ' (edited)') : '',
        m.privateTo ? el('span', { class: 'badge private-badge' }, 'Only you can see this') : '',
    );
    const content = el('div', { class: 'content' });
    if (m.t === 'rm') {
        content.append(el('em', {}, 'Message deleted'));
    } else if (m.blocks?.length) {
        // As in Rocket.Chat: a message with blocks shows its blocks, not its text.
        content.append(renderBlocks(m.blocks, { action: (a) => ctx.onButton(m, a) }));
    } else {
        const quoted = [];
        const text = m.text.replace(QUOTE_LINK, (_, _url, id) => {
            quoted.push(decodeURIComponent(id));
            return '';
        });
        content.append(...quoted.map((id) => quoteOf(ctx.find(id), id)), el('div', { class: 'text', html: markdown(text) }));
    }
    content.append(...(m.attachments ?? []).map(attachment));
    if (m.reactions && Object.keys(m.reactions).length) {
        content.append(reactionRow(m, ctx));
    }
    const footer = el('div', { class: 'message-footer' });
    const replies = ctx.inThread ? 0 : ctx.replies(m.id);
    if (replies > 0) {
        footer.append(el('button', { type: 'button', class: 'link thread-link', 'data-thread': m.id }, `${replies} ${replies === 1 ? 'reply' : 'replies'}`));
    }
    if (m.tmid && m.tshow && !ctx.inThread) {
        footer.append(el('button', { type: 'button', class: 'link thread-link', 'data-thread': m.tmid }, 'Sent in a thread: view thread'));
    }
    footer.querySelectorAll('[data-thread]').forEach((b) => b.addEventListener('click', () => ctx.onReply(b.dataset.thread)));
    const item = el(
        'li',
        { class: classes.filter(Boolean).join(' '), id: `message-${m.id}`, 'data-id': m.id },
        el('div', { class: 'avatar', 'aria-hidden': 'true' }, m.sender.username[0].toUpperCase()),
        el('div', { class: 'body' }, meta, content, footer),
    );
    if (!m.privateTo && m.t !== 'rm') {
        item.append(toolbar(m, ctx));
    }
    return item;
}

function toolbar(m, ctx) {
    const bar = el('div', { class: 'toolbar', role: 'group', 'aria-label': 'Message actions' });
    if (!ctx.inThread && !m.tmid) {
        const reply = el('button', { type: 'button', class: 'reply' }, 'Reply in thread');
        reply.addEventListener('click', () => ctx.onReply(m.id));
        bar.append(reply);
    }
    for (const [name, label] of [
        [':thumbsup:', '👍'],
        [':thumbsdown:', '👎'],
    ]) {
        const react = el('button', { type: 'button', class: 'react', 'data-react': name, 'aria-label': `React with ${name}` }, label);
        react.addEventListener('click', () => ctx.onReact(m, name));
        bar.append(react);
    }
    if (ctx.actions.length) {
        const menu = el('details', { class: 'menu' }, el('summary', { 'aria-label': 'More actions' }, '⋯'));
        const list = el('div', { class: 'menu-items' });
        for (const action of ctx.actions) {
            const b = el('button', { type: 'button', 'data-action': action.actionId }, action.label);
            b.addEventListener('click', () => {
                menu.open = false;
                ctx.onAction(action, m);
            });
            list.append(b);
        }
        menu.append(list);
        bar.append(menu);
    }
    return bar;
}
