// The HTTP API as API.md describes it: bearer token, JSON bodies, the error shape
// {"error": {"code", "message", "details"?}}. Nothing here knows about the screens.

export class ApiError extends Error {
  constructor(status, code, message, details = [], retryAfter = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
    this.retryAfter = retryAfter;
  }

  // What a person reads: each bad field in a sentence ("Username must be ..."), else API.md's
  // message; and when to retry.
  get text() {
    const details = this.details || [];
    const parts = details.length ? details.map((d) => `${fieldName(d.field)} ${d.message}.`) : [this.message];
    if (this.retryAfter) parts.push(`Try again in ${this.retryAfter} s.`);
    return parts.join(" ");
  }
}

// "display_name" -> "Display name", "body" -> "The request".
const fieldName = (field) => (field === "body" ? "The request" : (field.charAt(0).toUpperCase() + field.slice(1)).replace(/[_.]/g, " "));

const TOKEN_KEY = "warble.token";

// A busy service answers 429 (API Gateway's route throttle, which has no Retry-After, or a
// short rate limit) or 503 (a failing store, with Retry-After). A request that is safe to send
// again (a read, a PUT or DELETE, a POST with its Idempotency-Key: the same key, so it is done
// once) is sent again up to RETRIES times, after Retry-After or a jittered backoff, while that
// wait is short; a longer one is the person's to see.
const RETRIES = 3;
const RETRY_MAX_WAIT_S = 5;
const RETRIED = new Set([429, 503]);
const SAFE = new Set(["GET", "PUT", "DELETE"]);

function retryWait(response, attempt) {
  const header = Number(response.headers.get("Retry-After"));
  if (header > 0) return header;
  return Math.random() * 0.5 * 2 ** attempt; // full jitter: up to 0.5, 1, 2 s
}

const sleep = (seconds) => new Promise((done) => setTimeout(done, seconds * 1000));

export class Api {
  constructor(baseUrl) {
    this.base = baseUrl.replace(/\/$/, "");
    this.token = localStorage.getItem(TOKEN_KEY);
    this.onUnauthorized = () => {};
  }

  setToken(token) {
    this.token = token;
    if (token) localStorage.setItem(TOKEN_KEY, token);
    else localStorage.removeItem(TOKEN_KEY);
  }

  async request(method, path, { body, query, idempotent } = {}) {
    let url = this.base + path;
    if (query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) q.set(k, v);
      const s = q.toString();
      if (s) url += "?" + s;
    }
    const headers = {};
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (idempotent) headers["Idempotency-Key"] = crypto.randomUUID();
    const again = idempotent || SAFE.has(method);
    let response;
    for (let attempt = 0; ; attempt++) {
      try {
        response = await fetch(url, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      } catch {
        throw new ApiError(0, "network", "Warble cannot be reached. Check your connection and try again.");
      }
      if (!again || !RETRIED.has(response.status) || attempt >= RETRIES) break;
      const wait = retryWait(response, attempt);
      if (wait > RETRY_MAX_WAIT_S) break;
      await sleep(wait);
    }
    if (response.status === 204) return null;
    let data = null;
    try {
      data = await response.json();
    } catch {
      data = null;
    }
    if (response.ok) return data;
    const err = (data && data.error) || {};
    const retry = response.headers.get("Retry-After");
    const error = new ApiError(
      response.status,
      err.code || "error",
      err.message || (response.status >= 500
        ? "Something went wrong on Warble's side. Try again in a moment."
        : "Warble could not do that. Try again, or reload the page."),
      err.details || [],
      retry ? Number(retry) : null,
    );
    if (response.status === 401 && this.token && err.code === "unauthorized") this.onUnauthorized(error);
    throw error;
  }

  get(path, query) { return this.request("GET", path, { query }); }
  post(path, body) { return this.request("POST", path, { body, idempotent: true }); }
  put(path, body) { return this.request("PUT", path, { body }); }
  patch(path, body) { return this.request("PATCH", path, { body }); }
  del(path) { return this.request("DELETE", path); }

  // accounts
  signup(username, email, password, device) { return this.request("POST", "/v1/auth/signup", { body: { username, email, password, device } }); }
  login(login, password, device) { return this.request("POST", "/v1/auth/login", { body: { login, password, device } }); }
  logout() { return this.request("POST", "/v1/auth/logout"); }
  // A single-use ticket for one WebSocket connect (never the token in the socket's URL).
  socketTicket() { return this.request("POST", "/v1/auth/socket-ticket"); }
  sessions() { return this.get("/v1/auth/sessions"); }
  revoke(id) { return this.del(`/v1/auth/sessions/${id}`); }
  me() { return this.get("/v1/users/me"); }
  updateMe(fields) { return this.patch("/v1/users/me", fields); }
  changePassword(currentPassword, password) { return this.put("/v1/users/me/password", { current_password: currentPassword, password }); }
  requestReset(email) { return this.request("POST", "/v1/auth/password-reset", { body: { email } }); }
  deleteAccount(password) { return this.request("DELETE", "/v1/users/me", { body: { password } }); }
  confirmReset(token, password) { return this.request("POST", "/v1/auth/password-reset/confirm", { body: { token, password } }); }
  exportMe() { return this.get("/v1/users/me/export"); }
  user(id) { return this.get(`/v1/users/${id}`); }
  userByName(name) { return this.get(`/v1/users/by-username/${encodeURIComponent(name)}`); }

  // graph
  follow(id) { return this.put(`/v1/users/me/following/${id}`); }
  unfollow(id) { return this.del(`/v1/users/me/following/${id}`); }
  followers(id, cursor) { return this.get(`/v1/users/${id}/followers`, { cursor }); }
  following(id, cursor) { return this.get(`/v1/users/${id}/following`, { cursor }); }
  friends(id, cursor) { return this.get(`/v1/users/${id}/friends`, { cursor }); }
  mutual(id) { return this.get(`/v1/users/me/mutual-friends/${id}`); }
  degree(id) { return this.get(`/v1/users/me/degree/${id}`); }
  async relationship(id) { return (await this.get("/v1/users/me/relationships", { ids: id })).items[0]; }
  block(id, on) { return on ? this.put(`/v1/users/me/blocks/${id}`) : this.del(`/v1/users/me/blocks/${id}`); }
  mute(id, on) { return on ? this.put(`/v1/users/me/mutes/${id}`) : this.del(`/v1/users/me/mutes/${id}`); }
  blocks(cursor) { return this.get("/v1/users/me/blocks", { cursor }); }
  mutes(cursor) { return this.get("/v1/users/me/mutes", { cursor }); }

  // tweets
  home(cursor) { return this.get("/v1/timeline/home", { cursor }); }
  userTweets(id, cursor) { return this.get(`/v1/users/${id}/tweets`, { cursor }); }
  tweet(id) { return this.get(`/v1/tweets/${id}`); }
  replies(id, cursor) { return this.get(`/v1/tweets/${id}/replies`, { cursor }); }
  postTweet(text, replyTo, mediaIds) {
    const body = { text };
    if (replyTo) body.reply_to = replyTo;
    if (mediaIds && mediaIds.length) body.media_ids = mediaIds;
    return this.post("/v1/tweets", body);
  }
  deleteTweet(id) { return this.del(`/v1/tweets/${id}`); }
  like(id, on) { return on ? this.put(`/v1/tweets/${id}/like`) : this.del(`/v1/tweets/${id}/like`); }
  retweet(id, on) { return on ? this.post(`/v1/tweets/${id}/retweet`) : this.del(`/v1/tweets/${id}/retweet`); }

  // media
  createMedia(contentType, size, altText) { return this.post("/v1/media", { content_type: contentType, size, alt_text: altText }); }
  media(id) { return this.get(`/v1/media/${id}`); }
  setAltText(id, altText) { return this.patch(`/v1/media/${id}`, { alt_text: altText }); }

  // notifications
  notifications(types, cursor) { return this.get("/v1/notifications", { types, cursor }); }
  unreadCounts() { return this.get("/v1/notifications/unread-counts"); }
  markRead(types) { return this.request("POST", "/v1/notifications/read", { body: types ? { types } : { all: true } }); }

  // conversations
  conversations(cursor) { return this.get("/v1/conversations", { cursor }); }
  openConversation(participantId) { return this.request("POST", "/v1/conversations", { body: { participant_id: participantId } }); }
  messages(id, cursor) { return this.get(`/v1/conversations/${id}/messages`, { cursor, limit: 30 }); }
  readConversation(id) { return this.request("POST", `/v1/conversations/${id}/read`); }

  // discover
  setLocation(lat, lon) { return this.put("/v1/users/me/location", { lat, lon }); }
  discover(radiusKm) { return this.get("/v1/discover", { radius_km: radiusKm, limit: 20 }); }
  swipe(userId, direction) { return this.request("POST", "/v1/discover/swipes", { body: { user_id: userId, direction } }); }
  matches(cursor) { return this.get("/v1/discover/matches", { cursor }); }

  // reports, moderation, muted words
  report(targetType, targetId, reason, comment) {
    const body = { target_type: targetType, target_id: targetId, reason };
    if (comment) body.comment = comment;
    return this.post("/v1/reports", body);
  }
  myReports(cursor) { return this.get("/v1/reports", { cursor }); }
  cases(status, cursor) { return this.get("/v1/admin/cases", { status, cursor }); }
  resolveCase(id, action, note) { return this.post(`/v1/admin/cases/${id}/resolve`, note ? { action, note } : { action }); }
  suspend(userId, on) { return on ? this.put(`/v1/admin/users/${userId}/suspension`) : this.del(`/v1/admin/users/${userId}/suspension`); }
  mutedWords() { return this.get("/v1/users/me/muted-words"); }
  setMutedWords(words) { return this.put("/v1/users/me/muted-words", { words }); }
}
