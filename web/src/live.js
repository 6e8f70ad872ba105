// The WebSocket API: one connection per signed-in tab, reconnected with backoff when it drops,
// a ping now and then so idle proxies keep it open, and `sendMessage` answered by its ack. A
// drop is announced ("dropped"): the server closes the connections of a session that ended, and
// the shell then asks the HTTP API whether this tab's session still stands.

const PING_EVERY_MS = 60_000;
const ACK_TIMEOUT_MS = 15_000;

export class Live {
  constructor(url, token) {
    this.url = `${url.replace(/\/$/, "")}/?token=${encodeURIComponent(token)}`;
    this.listeners = new Set();
    this.pending = new Map(); // client_id -> {resolve, reject, timer}
    this.state = "connecting";
    this.attempt = 0;
    this.closed = false;
    this.connect();
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

  connect() {
    if (this.closed) return;
    this.setState(this.attempt ? "reconnecting" : "connecting");
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.onopen = () => {
      const again = this.attempt > 0;
      this.attempt = 0;
      this.setState("open");
      if (again) this.emit("reconnected", {});
      this.pinger = setInterval(() => this.send({ action: "ping" }), PING_EVERY_MS);
    };
    socket.onmessage = (event) => {
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return;
      }
      const data = frame.data || {};
      if (frame.type === "message_ack" || (frame.type === "error" && data.client_id)) {
        const waiting = this.pending.get(data.client_id);
        if (waiting) {
          this.pending.delete(data.client_id);
          clearTimeout(waiting.timer);
          if (frame.type === "message_ack") waiting.resolve(data.message);
          else waiting.reject(data);
        }
      }
      this.emit(frame.type, data);
    };
    socket.onclose = (event) => {
      clearInterval(this.pinger);
      if (this.socket !== socket || this.closed) return;
      this.emit("dropped", { code: event.code });
      for (const [id, waiting] of this.pending) {
        clearTimeout(waiting.timer);
        waiting.reject({ code: "disconnected", message: "The connection dropped before the message was sent.", client_id: id });
      }
      this.pending.clear();
      this.attempt += 1;
      this.setState("reconnecting");
      const delay = Math.min(10_000, 500 * 2 ** Math.min(this.attempt - 1, 5)) * (0.75 + Math.random() / 2);
      this.retry = setTimeout(() => this.connect(), delay);
    };
  }

  send(frame) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify(frame));
      return true;
    }
    return false;
  }

  // Resolves with the stored Message once the server acknowledges it.
  sendMessage(conversationId, text) {
    const clientId = crypto.randomUUID();
    return new Promise((resolve, reject) => {
      const frame = { action: "sendMessage", conversation_id: conversationId, text, client_id: clientId };
      if (!this.send(frame)) {
        reject({ code: "disconnected", message: "Not connected: the message was not sent.", client_id: clientId });
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
    clearTimeout(this.retry);
    clearInterval(this.pinger);
    if (this.socket) this.socket.close();
  }
}
