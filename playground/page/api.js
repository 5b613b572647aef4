// The playground server's JSON API and its one event stream.

export async function get(path, params = {}) {
    const query = new URLSearchParams(params).toString();
    return answer(await fetch(`/api/${path}${query ? `?${query}` : ''}`));
}

export async function post(path, body) {
    return answer(await fetch(`/api/${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }));
}

async function answer(response) {
    const json = await response.json().catch(() => ({}));
    if (!response.ok) {
        throw new Error(json.error ?? `${response.status} ${response.statusText}`);
    }
    return json;
}

/** Calls `onEvent` with each event; `onReconnect` after the stream came back (events may have been missed). */
export function listen(onEvent, onReconnect) {
    const source = new EventSource('/api/events');
    let opened = false;
    source.addEventListener('open', () => {
        if (opened) {
            onReconnect();
        }
        opened = true;
        document.body.dataset.live = 'true';
    });
    source.addEventListener('error', () => {
        document.body.dataset.live = 'false';
    });
    source.addEventListener('message', (e) => onEvent(JSON.parse(e.data)));
    return source;
}
