// The WebSocket API: one connection per signed-in tab, reconnected with backoff when it drops,
// and `sendMessage` answered by its ack.
//
// A socket can look open while nothing reaches it: the network went away without a close (a
// phone asleep, a proxy), or the server forgot its registration, so pushes look for it in vain.
// So the connection is "open" (the page says Live) only once a pong has come back saying the
// server has it registered (`ping`: the WebSocket function reads the registry). After that a
// heartbeat every HEARTBEAT_MS, and when the tab becomes visible and when the network returns,
// checks that frames still go both ways: `heartbeat` is answered by API Gateway itself (a MOCK
// route in template.yaml: no Lambda, no @connections call; issue 41), and keeps the socket under
// API Gateway's 10-minute idle timeout. The registration is checked again (`verify`) when the
// shell finds that the pushes missed something (a count they should have brought). An answer
// missing for PONG_TIMEOUT_MS, a pong saying "not registered", or a frame refused for that
// reason drops the socket and connects again, and the page then reads again what it shows
// ("reconnected"). A close is announced ("dropped"): the server closes the connections of a
// session that ended, and the shell then asks the HTTP API whether this tab's session still
// stands.
//
// The browser's own word that the network is gone (its "offline" event) is taken at once: the
// socket is dropped and the page says Offline, with no reconnection tried until "online".
//
// Every connect, the first and each reconnection, asks the HTTP API for a connect ticket and
// opens the socket with `?ticket=`: a single-use ticket good for 30 seconds, so the URL (which a
// browser prints when a connect fails, and proxies log) never holds the session's token, and a
// ticket read there is already used or expired. Without a ticket (offline, the API down, the
// session ended: the API client hears of that 401 itself) the attempt fails and is retried
// like a dropped socket. Nothing here logs.

// Under API Gateway's 10-minute idle timeout, with room for one lost heartbeat's wait; each is
// two API Gateway messages (no Lambda), so not every 30 s (issue 41): a dead socket is noticed
// sooner by the visibility and network events, and by the first push or send that fails.
const HEARTBEAT_MS = 300_000;
const PONG_TIMEOUT_MS = 10_000;
const ACK_TIMEOUT_MS = 15_000;
const NOT_REGISTERED = "This connection is not registered.";

export class Live {
  // `ticket`: an async function answering a new connect ticket (POST /v1/auth/socket-ticket).
  constructor(url, ticket) {
    this.url = url.replace(/\/$/, "");
    this.ticket = ticket;
    this.generation = 0; // bumped by every drop: a ticket that comes back late opens nothing
    this.listeners = new Set();
    this.pending = new Map(); // client_id -> {resolve, reject, timer}
    this.state = "connecting";
    this.attempt = 0;
    this.wasOpen = false; // a confirmed connection was lost: what the page shows may be stale
    this.closed = false;
    this.check = () => { if (!document.hidden) this.beat(); };
    this.offline = () => this.drop();
    this.online = () => {
      if (this.state !== "offline") return this.check();
      clearTimeout(this.retry);
      this.attempt = 0;
      this.connect();
    };
    document.addEventListener("visibilitychange", this.check);
    addEventListener("online", this.online);
    addEventListener("offline", this.offline);
    if (navigator.onLine === false) this.setState("offline");
    else this.connect();
  }

  on(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(type, data) {
    for (const listener of [...this.listeners]) listener(type, data);
  }

  setState(state) {
    if (this.state === state) return;
    this.state = state;
    this.emit("state", { state });
  }

  async connect() {
    if (this.closed) return;
    this.setState(this.wasOpen || this.attempt ? "reconnecting" : "connecting");
    const generation = this.generation;
    let ticket;
    try {
      ticket = await this.ticket();
    } catch {
      if (generation === this.generation) this.drop();
      return;
    }
    if (this.closed || generation !== this.generation) return;
    const socket = new WebSocket(`${this.url}/?ticket=${encodeURIComponent(ticket)}`);
    this.socket = socket;
    socket.onopen = () => {
      this.verify();
      this.heartbeat = setInterval(() => this.beat(), HEARTBEAT_MS);
    };
    socket.onmessage = (event) => {
      if (this.socket !== socket) return;
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return;
      }
      const data = frame.data || {};
      if (frame.type === "pong") return this.ponged(data);
      if (frame.type === "heartbeat") return this.beaten();
      if (frame.type === "error" && data.message === NOT_REGISTERED) {
        this.settle(data.client_id, null, { ...data, code: "not_registered" });
        return this.drop();
      }
      if (frame.type === "message_ack") this.settle(data.client_id, data.message, null);
      if (frame.type === "error" && data.client_id) this.settle(data.client_id, null, data);
      this.emit(frame.type, data);
    };
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      if (!this.closed) this.emit("dropped", { code: event.code });
      this.drop();
    };
  }

  // A ping that must come back in time; its pong says whether pushes can find this connection.
  verify() {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN || this.waiting) return;
    this.send({ action: "ping" });
    this.waiting = setTimeout(() => this.drop(), PONG_TIMEOUT_MS);
  }

  // A heartbeat that must come back in time (API Gateway answers it: the socket carries frames
  // both ways; it says nothing of the registration).
  beat() {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN || this.beating) return;
    this.send({ action: "heartbeat" });
    this.beating = setTimeout(() => this.drop(), PONG_TIMEOUT_MS);
  }

  beaten() {
    clearTimeout(this.beating);
    this.beating = null;
  }

  ponged(data) {
    clearTimeout(this.waiting);
    this.waiting = null;
    if (data.registered === false) return this.drop();
    const again = this.wasOpen && this.state !== "open";
    this.attempt = 0;
    this.wasOpen = true;
    this.setState("open");
    if (again) this.emit("reconnected", {});
  }

  settle(clientId, message, error) {
    const waiting = clientId && this.pending.get(clientId);
    if (!waiting) return;
    this.pending.delete(clientId);
    clearTimeout(waiting.timer);
    if (error) waiting.reject(error);
    else waiting.resolve(message);
  }

  // Forget this socket (whatever it still receives is ignored) and connect again with backoff.
  drop() {
    const socket = this.socket;
    this.socket = null;
    this.generation += 1;
    clearInterval(this.heartbeat);
    clearTimeout(this.waiting);
    clearTimeout(this.beating);
    this.waiting = this.beating = null;
    if (socket) {
      socket.onopen = socket.onmessage = socket.onclose = null;
      if (socket.readyState <= WebSocket.OPEN) socket.close();
    }
    for (const [id, waiting] of this.pending) {
      clearTimeout(waiting.timer);
      waiting.reject({ code: "disconnected", message: "The connection dropped before the message was sent.", client_id: id });
    }
    this.pending.clear();
    if (this.closed) return;
    clearTimeout(this.retry);
    if (navigator.onLine === false) return this.setState("offline"); // "online" reconnects
    this.attempt += 1;
    this.setState("reconnecting");
    const delay = Math.min(10_000, 500 * 2 ** Math.min(this.attempt - 1, 5)) * (0.75 + Math.random() / 2);
    this.retry = setTimeout(() => this.connect(), delay);
  }

  send(frame) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify(frame));
      return true;
    }
    return false;
  }

  // Resolves with the stored Message once the server acknowledges it. Refused with `unsent`
  // or code "not_registered", the message was not stored: it may be sent another way. Refused
  // with code "disconnected" or "timeout", it may have been stored: sending it again with the
  // same `clientId` answers the stored one (the server keeps a sender's client_id 7 days).
  sendMessage(conversationId, text, clientId = crypto.randomUUID()) {
    return new Promise((resolve, reject) => {
      const frame = { action: "sendMessage", conversation_id: conversationId, text, client_id: clientId };
      if (this.state !== "open" || !this.send(frame)) {
        reject({ code: "disconnected", message: "Not connected: the message was not sent.", client_id: clientId, unsent: true });
        return;
      }
      const timer = setTimeout(() => {
        this.pending.delete(clientId);
        reject({ code: "timeout", message: "No answer from the server; the message may not have been sent.", client_id: clientId });
      }, ACK_TIMEOUT_MS);
      this.pending.set(clientId, { resolve, reject, timer });
    });
  }

  close() {
    this.closed = true;
    document.removeEventListener("visibilitychange", this.check);
    removeEventListener("online", this.online);
    removeEventListener("offline", this.offline);
    clearTimeout(this.retry);
    this.drop();
  }
}
