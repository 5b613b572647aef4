// The playground page: a small Rocket.Chat over the rig. It loads the signed-in person's rooms
// and messages, keeps them current from the server's event stream, and sends what the person
// does (post, command, click, submit) to the JSON API. See playground/server.ts.
import { adminView } from './admin.js';
import { get, listen, post } from './api.js';
import { composer } from './composer.js';
import { el } from './dom.js';
import { inline } from './markdown.js';
import { messageItem } from './messages.js';
import { surfaces } from './surfaces.js';

const $ = (selector) => document.querySelector(selector);

const state = {
    me: null,
    bot: null,
    people: [],
    rooms: [],
    commands: [],
    actions: [],
    /** id → message (rooms the person is in, and private messages to them). */
    messages: new Map(),
    room: null,
    thread: null,
    /** rid → Map(username → until ms). */
    typing: new Map(),
    unread: new Map(),
};

const toastBox = $('#toast');
function toast(text, error = false) {
    toastBox.textContent = text;
    toastBox.className = error ? 'error' : '';
    toastBox.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => (toastBox.hidden = true), 5000);
}

async function act(promise) {
    try {
        return await promise;
    } catch (error) {
        toast(error.message, true);
        throw error;
    }
}

const roomById = (id) => state.rooms.find((r) => r.id === id);

function roomLabel(room) {
    if (room.type === 'd') {
        const others = room.members.filter((u) => u !== state.me.username);
        return { icon: '@', text: others.join(', ') || state.me.username, kind: 'Direct message' };
    }
    return room.type === 'p' ? { icon: LOCK, text: room.name, kind: 'Private group' } : { icon: '#', text: room.name, kind: 'Channel' };
}

/** A padlock drawn, not an emoji: it shows without an emoji font. */
const LOCK =
    '<svg viewBox="0 0 16 16" width="13" height="13" aria-hidden="true"><path fill="currentColor" d="M4 7V5a4 4 0 0 1 8 0v2h1v8H3V7zm2 0h4V5a2 2 0 0 0-4 0z"/></svg>';
const iconOf = (label) => el('span', { class: 'room-icon', 'aria-hidden': 'true', html: label.icon === LOCK ? LOCK : label.icon });

function visibleTo(m) {
    return m.privateTo ? m.privateTo === state.me.id : Boolean(roomById(m.rid));
}

function sorted(filter) {
    return [...state.messages.values()].filter(filter).sort((a, b) => a.createdAt - b.createdAt);
}

const replies = (id) => sorted((m) => m.tmid === id && !m.privateTo && m.t !== 'rm').length;

function actionsFor(context, room, message) {
    const types = { c: 'public_channel', p: 'private_channel', d: 'direct' };
    return state.actions.filter((a) => {
        if (a.context !== context) {
            return false;
        }
        if (a.when.roomTypes?.length && !a.when.roomTypes.includes(types[room.type])) {
            return false;
        }
        if (message && a.when.messageActionContext?.length) {
            const shownIn = message.tmid ? (message.tshow ? ['threads', 'message'] : ['threads']) : ['message'];
            return shownIn.some((c) => a.when.messageActionContext.includes(c));
        }
        return true;
    });
}

// ---- drawing -------------------------------------------------------------------------

function drawRooms() {
    $('#room-list').replaceChildren(
        ...state.rooms.map((room) => {
            const label = roomLabel(room);
            const unread = state.unread.get(room.id) ?? 0;
            const button = el(
                'button',
                { type: 'button', 'aria-current': room.id === state.room?.id ? 'page' : undefined, 'data-room': room.id },
                iconOf(label),
                el('span', { class: 'sr-only' }, `${label.kind} `),
                label.text,
                unread ? el('span', { class: 'unread', 'aria-label': `${unread} unread` }, String(unread)) : '',
            );
            button.addEventListener('click', () => openRoom(room.id));
            return el('li', {}, button);
        }),
    );
}

/** Keeps the list's existing nodes for unchanged messages, so focus and scroll stay put. */
function drawList(list, messages, inThread) {
    const nearBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - 40;
    const cache = (list.cache ??= new Map());
    const nodes = messages.map((m) => {
        const actions = m.privateTo ? [] : actionsFor('messageAction', roomById(m.rid), m);
        const quoted = [...m.text.matchAll(/[?&]msg=([^)&\s]+)/g)].map((q) => state.messages.get(decodeURIComponent(q[1]))?.text);
        const key = JSON.stringify([m, inThread ? 0 : replies(m.id), quoted, state.me.id]);
        const cached = cache.get(m.id);
        if (cached?.key === key) {
            return cached.node;
        }
        const node = messageItem(m, {
            me: state.me,
            inThread,
            actions,
            find: (id) => state.messages.get(id),
            replies,
            onReply: (id) => openThread(id),
            onAction: (action, message) => void act(post('action', { user: state.me.id, actionId: action.actionId, rid: message.rid, mid: message.id })),
            onButton: (message, a) => void act(post('button', { user: state.me.id, mid: message.id, actionId: a.actionId, value: a.value })),
            onReact: (message, emoji) => void act(post('react', { user: state.me.id, mid: message.id, emoji })),
        });
        cache.set(m.id, { key, node });
        return node;
    });
    const keep = new Set(nodes);
    for (const child of [...list.children]) {
        if (!keep.has(child)) {
            child.remove();
        }
    }
    nodes.forEach((node, i) => {
        if (list.children[i] !== node) {
            list.insertBefore(node, list.children[i] ?? null);
        }
    });
    if (nearBottom) {
        list.scrollTop = list.scrollHeight;
    }
}

function drawRoom() {
    const room = state.room;
    if (!room) {
        return;
    }
    const label = roomLabel(room);
    $('#room-title').replaceChildren(iconOf(label), label.text);
    $('#room-kind').textContent = `${label.kind} · ${room.members.length} members`;
    $('#room-actions').replaceChildren(
        ...actionsFor('roomAction', room).map((action) => {
            const b = el('button', { type: 'button', 'data-action': action.actionId }, action.label);
            b.addEventListener('click', () => void act(post('action', { user: state.me.id, actionId: action.actionId, rid: room.id })));
            return b;
        }),
    );
    $('#composer textarea').setAttribute('placeholder', `Message ${label.icon === '#' ? '#' : ''}${label.text}`);
    drawList(
        $('#messages'),
        sorted((m) => m.rid === room.id && visibleTo(m) && (!m.tmid || m.tshow)),
        false,
    );
    drawTyping();
}

function drawThread() {
    const aside = $('#thread');
    const root = state.thread && state.messages.get(state.thread);
    if (!root || root.rid !== state.room?.id) {
        aside.hidden = true;
        state.thread = null;
        return;
    }
    aside.hidden = false;
    drawList(
        $('#thread-messages'),
        sorted((m) => (m.id === root.id || m.tmid === root.id) && visibleTo(m)),
        true,
    );
}

function drawTyping() {
    const now = Date.now();
    const who = [...(state.typing.get(state.room?.id) ?? new Map()).entries()].filter(([, until]) => until > now).map(([u]) => u);
    $('#typing').textContent = who.length ? `${who.join(', ')} ${who.length === 1 ? 'is' : 'are'} typing…` : '';
}

function drawHint(hermes) {
    const hint = $('#hint');
    const bot = `@${state.bot.username}`;
    hint.replaceChildren(
        el('strong', {}, `Connected to ${hermes.label}. `),
        el('span', { html: inline(`In a channel mention ${bot}; in your DM with it just write. Type \`/\` for commands, \`@\` for people.`) }),
    );
    if (hermes.keywords.length) {
        hint.append(
            el('span', {}, ' Demo keywords: '),
            el('ul', { class: 'keywords' }, ...hermes.keywords.map((k) => el('li', {}, el('code', {}, k.word), el('span', { html: ` ${inline(k.shows)}` })))),
        );
    }
}

// ---- actions -------------------------------------------------------------------------

function openRoom(id) {
    const room = roomById(id) ?? state.rooms[0];
    if (state.room?.id !== room.id) {
        state.thread = null;
        $('#messages').replaceChildren();
        $('#messages').cache = new Map();
    }
    state.room = room;
    state.unread.delete(room.id);
    const url = new URL(location.href);
    url.searchParams.set('room', room.name || room.id);
    history.replaceState(null, '', url);
    drawRooms();
    drawRoom();
    drawThread();
}

function openThread(id) {
    state.thread = id;
    $('#thread-messages').replaceChildren();
    $('#thread-messages').cache = new Map();
    drawThread();
    $('#thread textarea').focus();
}

const drawSurfaces = surfaces({ dialog: $('#modal'), bar: $('#contextual-bar') }, (op, view, extra = {}) =>
    act(post('view', { user: state.me.id, viewId: view.id, op, ...extra })).then((answer) => {
        if (answer.response?.type === 'errors') {
            toast('Please check the form.', true);
        }
    }),
);

async function signIn(userId) {
    const data = await get('state', { user: userId });
    Object.assign(state, { me: data.me, bot: data.bot, people: data.people, rooms: data.rooms, commands: data.commands, actions: data.actions });
    state.messages = new Map((await get('messages', { user: data.me.id })).map((m) => [m.id, m]));
    state.unread.clear();
    for (const list of [$('#messages'), $('#thread-messages')]) {
        list.replaceChildren();
        list.cache = new Map();
    }
    const select = $('#user-switcher');
    select.replaceChildren(...data.people.map((p) => el('option', { value: p.id, selected: p.id === data.me.id }, `${p.username} (${p.name})`)));
    const url = new URL(location.href);
    url.searchParams.set('user', data.me.username);
    history.replaceState(null, '', url);
    drawHint(data.hermes);
    const wanted = new URL(location.href).searchParams.get('room');
    const room = state.rooms.find((r) => r.id === state.room?.id) ?? state.rooms.find((r) => r.name === wanted || r.id === wanted) ?? state.rooms[0];
    state.room = null;
    openRoom(room.id);
    drawSurfaces(data.surfaces);
    document.body.dataset.ready = 'true';
}

function onEvent(event) {
    if (!state.me) {
        return;
    }
    switch (event.type) {
        case 'message': {
            const m = event.message;
            if (!visibleTo(m)) {
                return;
            }
            const isNew = !state.messages.has(m.id);
            state.messages.set(m.id, m);
            if (isNew && m.rid !== state.room?.id && m.sender.id !== state.me.id) {
                state.unread.set(m.rid, (state.unread.get(m.rid) ?? 0) + 1);
                drawRooms();
            }
            break;
        }
        case 'delete':
            state.messages.delete(event.id);
            break;
        case 'typing': {
            const room = state.typing.get(event.rid) ?? new Map();
            state.typing.set(event.rid, room);
            if (event.isTyping) {
                room.set(event.username, Date.now() + 8000);
            } else {
                room.delete(event.username);
            }
            drawTyping();
            return;
        }
        case 'ui':
            if (event.userId === state.me.id) {
                drawSurfaces(event.surfaces);
            }
            return;
        default:
            return;
    }
    drawRoom();
    drawThread();
}

// ---- wiring --------------------------------------------------------------------------

const sources = () => ({ members: state.room?.members.filter((u) => u !== state.me.username) ?? [], commands: state.commands });

composer($('#composer'), sources, (text) => act(post('post', { user: state.me.id, rid: state.room.id, text })));
composer($('#thread-composer'), sources, async (text) => {
    const tshow = $('#also-send').checked;
    await act(post('post', { user: state.me.id, rid: state.room.id, tmid: state.thread, text, tshow }));
    $('#also-send').checked = false;
});
$('#close-thread').addEventListener('click', () => {
    state.thread = null;
    drawThread();
});
$('#user-switcher').addEventListener('change', (e) => void signIn(e.target.value));

const admin = adminView($('#admin-view'), toast);
function showView(name) {
    const isAdmin = name === 'admin';
    $('#chat-view').hidden = isAdmin;
    $('#admin-view').hidden = !isAdmin;
    $('#tab-chat').setAttribute('aria-pressed', String(!isAdmin));
    $('#tab-admin').setAttribute('aria-pressed', String(isAdmin));
    if (isAdmin) {
        void admin.show();
    } else {
        admin.hide();
    }
}
$('#tab-chat').addEventListener('click', () => showView('chat'));
$('#tab-admin').addEventListener('click', () => showView('admin'));
setInterval(drawTyping, 1000);

listen(onEvent, () => void signIn(state.me.id));
void signIn(new URL(location.href).searchParams.get('user') ?? 'alice');
