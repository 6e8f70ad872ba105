// Direct messages: the conversation list with unread counts, and a conversation whose messages
// arrive live both ways (sent over the WebSocket's sendMessage and acknowledged), with older
// history loaded by scrolling up.
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { html, useApp, usePaged, Sentinel, ErrorNote, Avatar, Badge, Icon, Time, userHref } from "./ui.js";
import { ReportDialog } from "./moderation.js";

const other = (conversation, me) =>
  (conversation.participants || []).find((p) => p.id !== me.id) || (conversation.participants || [])[0] || { username: "?" };

export function MessagesPage({ id }) {
  const { api, live } = useApp();
  const fetchPage = useCallback((cursor) => api.conversations(cursor), [api]);
  const list = usePaged(fetchPage, "conversations");

  // A message anywhere moves its conversation up and changes its unread count: read the list
  // again, in place (it used to empty and refill on every message).
  useEffect(() => live && live.on((event) => {
    if (event === "message" || event === "match" || event === "reconnected") list.refresh();
  }), [live]);

  const current = list.items.find((c) => c.id === id);
  const read = (cid) => list.update((items) => items.map((c) => (c.id === cid ? { ...c, unread_count: 0 } : c)));
  // My own message (its ack or HTTP answer; no push comes back to this connection): its
  // conversation's preview changes and it moves to the top; one not listed yet is read again.
  const sent = (message) => {
    if (!list.items.some((c) => c.id === message.conversation_id)) return list.reload();
    list.update((items) => {
      const mine = items.find((c) => c.id === message.conversation_id);
      return [{ ...mine, last_message: message, unread_count: 0 }, ...items.filter((c) => c !== mine)];
    });
  };
  return html`<section class=${"page messages" + (id ? " has-open" : "")}>
    <div class="conversation-list">
      <h1>Messages</h1>
      <${ConversationList} list=${list} current=${id} />
    </div>
    ${id ? html`<${Conversation} key=${id} id=${id} conversation=${current} onRead=${read} onSent=${sent} />`
      : html`<div class="conversation empty-pane"><p class="empty">Pick a conversation, or start one from a friend's profile or a Discover match.</p></div>`}
  </section>`;
}

function ConversationList({ list, current }) {
  const { me } = useApp();
  // Only <li> inside the <ul> (axe-core's list rule): the error and the sentinel follow it.
  return html`<ul class="conversations">
    ${list.items.map((c) => {
      const them = other(c, me);
      return html`<li key=${c.id} class=${(c.id === current ? "on " : "") + (c.unread_count ? "unread" : "")} data-conversation=${c.id}>
        <a href=${"#/messages/" + c.id}>
          <${Avatar} user=${them} size=${40} />
          <div class="c-text">
            <div class="c-who"><b>${them.display_name || them.username}</b> <span class="handle">@${them.username}</span></div>
            <div class="snippet">${c.last_message ? c.last_message.text : "No messages yet"}</div>
          </div>
          <${Badge} n=${c.unread_count} label="conversation" />
        </a>
      </li>`;
    })}
    ${!list.loading && !list.items.length && html`<li class="empty">No conversations yet.</li>`}
  </ul>
  <${ErrorNote} error=${list.error} />
  <${Sentinel} onVisible=${list.more} done=${list.done} loading=${list.loading} />`;
}

function Conversation({ id, conversation, onRead, onSent }) {
  const { api, me, live, refreshCounts } = useApp();
  const [messages, setMessages] = useState([]); // oldest first
  const [cursor, setCursor] = useState(null);
  const [done, setDone] = useState(false);
  const [error, setError] = useState(null);
  const [text, setText] = useState("");
  const [reporting, setReporting] = useState(null); // a message of theirs
  const box = useRef(null);
  const keep = useRef(null); // scroll anchor while older history is prepended
  const stick = useRef(true);
  const loading = useRef(false);

  const markRead = useCallback(async () => {
    try {
      await api.readConversation(id);
      onRead(id);
      refreshCounts();
    } catch {
      /* shown by the next refresh */
    }
  }, [id]);

  const loadOlder = useCallback(async (from) => {
    if (loading.current) return;
    loading.current = true;
    try {
      const page = await api.messages(id, from);
      if (from) keep.current = box.current.scrollHeight - box.current.scrollTop;
      setMessages((ms) => merge(page.items, ms));
      setCursor(page.next_cursor);
      setDone(!page.next_cursor);
    } catch (e) {
      setError(e);
    } finally {
      loading.current = false;
    }
  }, [id]);

  useEffect(() => {
    loadOlder(null).then(markRead);
  }, [id]);

  useEffect(() => live && live.on((event, data) => {
    if (event === "message" && data.conversation_id === id) {
      stick.current = isNearBottom(box.current);
      setMessages((ms) => merge([data], ms));
      if (data.sender_id !== me.id) markRead();
    }
  }), [live, id]);

  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    if (keep.current !== null) {
      el.scrollTop = el.scrollHeight - keep.current;
      keep.current = null;
    } else if (stick.current) {
      el.scrollTop = el.scrollHeight;
    }
  }, [messages]);

  function onScroll() {
    const el = box.current;
    stick.current = isNearBottom(el);
    if (el.scrollTop < 60 && !done && cursor) loadOlder(cursor);
  }

  // My messages not yet confirmed, by client_id: one whose fate a drop hid (it may be stored)
  // stays "Sending…" and is sent again with the same client_id once the connection is back,
  // which answers the stored message if it was (no copy); one certainly not sent says so, with
  // Retry.
  const unconfirmed = useRef(new Map()); // client_id -> text
  const mark = (clientId, fields) =>
    setMessages((ms) => ms.map((m) => (m.client_id === clientId ? { ...m, ...fields } : m)));

  async function deliver(clientId, body) {
    unconfirmed.current.set(clientId, body);
    mark(clientId, { pending: true, failed: false });
    const overHttp = () => api.post(`/v1/conversations/${id}/messages`, { text: body });
    try {
      // Over the WebSocket with its ack; over HTTP while the socket is reconnecting, or when
      // it refused the message unstored (its registration was gone: it reconnects meanwhile).
      const online = navigator.onLine !== false;
      const sent = live && live.state === "open"
        ? await live.sendMessage(id, body, clientId).catch((e) => ((e.unsent || e.code === "not_registered") && online ? overHttp() : Promise.reject(e)))
        : online ? await overHttp() : await Promise.reject({ unsent: true, message: "You are offline: the message was not sent." });
      unconfirmed.current.delete(clientId);
      setMessages((ms) => merge([sent], ms.filter((m) => m.client_id !== clientId)));
      onSent(sent);
    } catch (e) {
      if (!e.unsent && (e.code === "disconnected" || e.code === "timeout")) return; // reconciled on reconnecting
      unconfirmed.current.delete(clientId);
      mark(clientId, { pending: false, failed: true });
      setError(e);
    }
  }

  // Reconnected: the messages a drop left unconfirmed are sent again by their client_id, then
  // the history is read again (what was pushed meanwhile), so none shows twice even briefly.
  useEffect(() => live && live.on((event) => {
    if (event !== "reconnected") return;
    const again = [...unconfirmed.current].map(([clientId, body]) => deliver(clientId, body));
    Promise.allSettled(again).then(() => loadOlder(null));
  }), [live, id]);

  function send(event) {
    event.preventDefault();
    const body = text.trim();
    if (!body) return;
    setText("");
    setError(null);
    const clientId = crypto.randomUUID();
    const temp = { id: "pending-" + clientId, client_id: clientId, sender_id: me.id, text: body, created_at: new Date().toISOString(), pending: true };
    stick.current = true;
    setMessages((ms) => [...ms, temp]);
    deliver(clientId, body);
  }

  function retry(m) {
    setError(null);
    deliver(m.client_id, m.text);
  }

  const them = conversation ? other(conversation, me) : null;
  return html`<div class="conversation">
    <header class="c-head">
      <a class="back-link" href="#/messages" aria-label="Back to the conversations"><${Icon} name="back" /></a>
      ${them ? html`<a href=${userHref(them)}><${Avatar} user=${them} size=${32} /> <b>${them.display_name || them.username}</b></a>` : html`<b>Conversation</b>`}
    </header>
    <div class="message-box" ref=${box} onScroll=${onScroll} data-testid="message-box" tabIndex="0" role="log" aria-label="Conversation history">
      ${done ? html`<p class="history-start">This is the start of your conversation.</p>` : html`<p class="history-start">Scroll up for older messages</p>`}
      ${messages.map((m) => html`<div key=${m.id} class=${"message" + (m.sender_id === me.id ? " mine" : "") + (m.pending ? " pending" : "") + (m.failed ? " failed" : "")} data-message-id=${m.id}>
        <div class="bubble">${m.text}</div>
        <div class="meta">${m.pending ? "Sending…" : m.failed ? html`Not sent <button type="button" class="link retry" onClick=${() => retry(m)}>Retry</button>` : html`<${Time} iso=${m.created_at} />`}
          ${m.sender_id !== me.id && html` <button type="button" class="link report" onClick=${() => setReporting(m)} aria-label=${`Report “${snippet(m.text)}”`}>Report</button>`}</div>
      </div>`)}
    </div>
    ${reporting && html`<${ReportDialog} target=${{ type: "message", id: reporting.id, what: "this message" }} onClose=${() => setReporting(null)} />`}
    <${ErrorNote} error=${error} />
    <form class="message-form" onSubmit=${send}>
      <input name="message" placeholder="Write a message" value=${text} maxLength="2000" autocomplete="off" onInput=${(e) => setText(e.currentTarget.value)} aria-label="Message" />
      <button type="submit" class="primary" disabled=${!text.trim()}>Send</button>
    </form>
  </div>`;
}

// A message's Report button is named by its words (Report “Hello?”), not "Report this message":
// a name holding "message" would also answer to the message box's own label.
const snippet = (text) => (text.length > 40 ? text.slice(0, 40) + "…" : text);

const isNearBottom = (el) => !el || el.scrollHeight - el.scrollTop - el.clientHeight < 80;

// Messages oldest first, each once (a pushed message may also arrive in a page).
function merge(incoming, current) {
  const byId = new Map(current.map((m) => [m.id, m]));
  for (const m of incoming) byId.set(m.id, m);
  return [...byId.values()].sort((a, b) => (a.pending ? 1 : 0) - (b.pending ? 1 : 0) || cmpId(a.id, b.id));
}

// Snowflake ids are decimal strings: compare by length, then lexically.
const cmpId = (a, b) => (a.length - b.length) || (a < b ? -1 : a > b ? 1 : 0);
