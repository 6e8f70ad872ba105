// Warble's web client: the shell (navigation with live unread badges, connection state, toasts,
// the match moment) and the routes. It reads where the APIs are from config.json, which the
// local runtime generates and the deploy step writes next to these files.
import { render } from "preact";
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Api } from "./api.js";
import { Live } from "./live.js";
import { html, AppContext, useRoute, Badge, Avatar, Icon, Logo, go, trackHistory } from "./ui.js";
import { AuthScreen, ForgotScreen, ResetScreen, SettingsPage, SessionsPage, BlockedPage, MorePage } from "./account.js";
import { HomeTimeline, TweetPage } from "./tweets.js";
import { ProfilePage } from "./profile.js";
import { NotificationsPage, NOTIFICATION_TYPES } from "./notifications.js";
import { MessagesPage } from "./messages.js";
import { DiscoverPage, MatchModal } from "./discover.js";
import { SearchPage, HashtagPage } from "./search.js";
import { ModerationPage } from "./moderation.js";

// Every count is pushed (a notification carries them all; `home` after a followed account's
// tweet reaches the home timeline; a direct message adds one to `message` here), so the counts
// trust the pushes (issue 41): they are read at each (re)connection and when the tab comes back to
// the front; while the socket is confirmed open, otherwise only every LIVE_COUNTS_POLL_MS, a
// safety net that also brings the system count and the home count of accounts too big to be
// announced one follower at a time; without a live socket (connecting, reconnecting) every
// COUNTS_POLL_MS. A read that finds a pushed count higher than the pushes made it means they
// missed something: the socket's registration is checked again (live.verify).
const COUNTS_POLL_MS = 60_000;
const LIVE_COUNTS_POLL_MS = 600_000;
const PUSHED = ["follow", "like", "reply", "mention", "retweet", "match", "message"];
const SIGNED_OUT_ROUTES = ["login", "signup", "forgot", "reset-password", "home", ""];
const ZERO = { follow: 0, like: 0, reply: 0, mention: 0, retweet: 0, match: 0, system: 0, message: 0, home: 0, total: 0 };

function App({ config }) {
  const api = useMemo(() => new Api(config.HttpApiUrl), []);
  const [me, setMe] = useState(null);
  const [phase, setPhase] = useState(api.token ? "checking" : "out");
  const [notice, setNotice] = useState(null);
  const [live, setLive] = useState(null);
  const [liveState, setLiveState] = useState("connecting");
  const [counts, setCounts] = useState(ZERO);
  const [toasts, setToasts] = useState([]);
  const [match, setMatch] = useState(null);
  const route = useRoute();
  // Where a signed-out visitor was going (a shared link): the login leads there, not home.
  const afterLogin = useRef(null);
  if (phase === "out" && !SIGNED_OUT_ROUTES.includes(route[0])) afterLogin.current = route.join("/");

  const toast = useCallback((what) => {
    const id = Math.random();
    const text = typeof what === "string" ? what : what.text || what.message;
    const kind = typeof what === "string" ? "info" : "error";
    setToasts((ts) => [...ts, { id, text, kind }]);
    setTimeout(() => setToasts((ts) => ts.filter((t) => t.id !== id)), 5000);
  }, []);

  const endSession = useCallback((message) => {
    api.setToken(null);
    setMe(null);
    setCounts(ZERO);
    setNotice(message);
    setPhase("out");
    go("login");
  }, []);

  api.onUnauthorized = () => endSession("Your session has ended (it was revoked or expired). Log in again.");

  useEffect(() => {
    if (phase !== "checking") return;
    api.me().then((user) => { setMe(user); setPhase("in"); }, (e) => {
      if (e.status !== 401) { setNotice(e.text); api.setToken(null); setPhase("out"); }
    });
  }, [phase]);

  // A counts answer asked for before a mark-read was answered is older than it: it may still count
  // what was just read ("Show 1 new post" over a timeline holding it), so it is dropped; the
  // read that follows every mark-read brings the counts as they are.
  const marks = useRef(0);
  const countsAt = useRef(0); // when the counts were last asked for (Date.now())
  const socketState = useRef("connecting"); // the socket's state, for the poll's pace
  const shown = useRef(ZERO); // the counts on screen, for the safety net's comparison
  shown.current = counts;
  const liveRef = useRef(null);
  const meRef = useRef(null);
  meRef.current = me;
  // `check`: a read of the safety net or a return to the tab, while the socket is live: a pushed
  // count above what the pushes brought means they are not reaching this tab.
  const refreshCounts = useCallback(async (check = false) => {
    const asked = marks.current;
    countsAt.current = Date.now();
    try {
      const answer = await api.unreadCounts();
      if (asked !== marks.current) return;
      const missed = PUSHED.some((t) => (answer[t] || 0) > (shown.current[t] || 0));
      setCounts(answer);
      if (check && missed && socketState.current === "open" && liveRef.current) liveRef.current.verify();
    } catch {
      /* the next poll tries again; a 401 ends the session through onUnauthorized */
    }
  }, []);

  const markRead = useCallback(async (types) => {
    marks.current += 1;
    setCounts((c) => {
      const next = { ...c };
      for (const t of types || Object.keys(ZERO)) next[t] = 0;
      next.total = Object.keys(ZERO).filter((k) => k !== "total").reduce((s, k) => s + next[k], 0);
      return next;
    });
    try {
      await api.markRead(types);
    } catch (e) {
      toast(e);
    }
    marks.current += 1; // (a read sent while the mark-read was on its way is as old)
    refreshCounts();
  }, []);

  // Signed in: the WebSocket, the counts, their poll.
  useEffect(() => {
    if (phase !== "in") return undefined;
    const connection = new Live(config.WebSocketUrl, async () => (await api.socketTicket()).ticket);
    liveRef.current = connection;
    setLive(connection);
    const off = connection.on((event, data) => {
      if (event === "state") { socketState.current = data.state; setLiveState(data.state); }
      if (event === "notification") {
        // The event carries the recipient's unread counts as of this notification (and a
        // mark-read on another device pushes one with the counts alone): no extra request.
        if (data.unread_counts) setCounts(data.unread_counts);
        else refreshCounts();
      }
      // A message from the other side is one more unread (an open conversation reads itself and
      // then the counts); my own, sent from another tab, changes nothing.
      if (event === "message" && data.sender_id !== (meRef.current && meRef.current.id)) {
        setCounts((c) => ({ ...c, message: (c.message || 0) + 1, total: (c.total || 0) + 1 }));
      }
      if (event === "reconnected") refreshCounts();
      if (event === "match") setMatch(data);
      // The server closes the connections of a session that ended (logout elsewhere, a
      // revocation, a password change): is ours still live? A 401 ends it here through
      // onUnauthorized, at once, not at the next poll (a hidden tab does not poll).
      if (event === "dropped" || (event === "error" && data.code === "unauthorized")) {
        api.me().catch(() => { /* a 401 has ended the session; anything else: still in */ });
      }
    });
    const onMatch = (e) => setMatch(e.detail);
    addEventListener("warble:match", onMatch);
    refreshCounts();
    const timer = setInterval(() => {
      const every = socketState.current === "open" ? LIVE_COUNTS_POLL_MS : COUNTS_POLL_MS;
      if (!document.hidden && Date.now() - countsAt.current >= every - 1000) refreshCounts(true);
    }, COUNTS_POLL_MS);
    // A tab coming back to the front (a phone waking up) reads them at once: it may have missed
    // pushes, or its session may have ended meanwhile.
    const onShow = () => { if (!document.hidden) refreshCounts(true); };
    document.addEventListener("visibilitychange", onShow);
    return () => {
      off();
      connection.close();
      clearInterval(timer);
      document.removeEventListener("visibilitychange", onShow);
      removeEventListener("warble:match", onMatch);
      liveRef.current = null;
      setLive(null);
    };
  }, [phase]);

  async function signOut() {
    try {
      await api.logout();
    } catch {
      /* signed out here either way */
    }
    endSession("You are logged out.");
  }

  // The reset email's link, signed in or not: a reset ends every session, this one too.
  if (route[0] === "reset-password") {
    return html`<${ResetScreen} api=${api} onDone=${(message) => { if (phase === "in") endSession(message); else { setNotice(message); go("login"); } }} />`;
  }
  if (phase === "checking") return html`<main class="auth"><p class="empty">Loading…</p></main>`;
  if (phase === "out" && route[0] === "forgot") return html`<${ForgotScreen} api=${api} />`;
  if (phase === "out") {
    return html`<${AuthScreen} api=${api} notice=${notice} onSignedIn=${(answer) => {
      api.setToken(answer.token);
      setMe(answer.user);
      setNotice(null);
      setPhase("in");
      go(afterLogin.current || "home");
      afterLogin.current = null;
    }} />`;
  }

  const context = { api, me, setMe, live, counts, refreshCounts, markRead, toast, signOut, endSession };
  const notificationsUnread = NOTIFICATION_TYPES.reduce((s, t) => s + (counts[t] || 0), 0);
  const [page, ...params] = route;
  // The Profile tab is lit on my own profile only.
  const at = page === "u" && params[0] !== me.username ? "someone" : page;
  // Each link's label stays in the accessibility tree when a phone shows only icons; `phone`
  // links are the phone's tab bar (the others are under More there).
  const link = (name, href, label, icon, badge, where = "both") => html`<a class=${`nav-link ${where}` + (at === name ? " on" : "")} href=${href} data-nav=${name}
      aria-current=${at === name ? "page" : undefined}>
    <span class="icon"><${Icon} name=${icon} size=${24} filled=${at === name && !["compass", "shield", "more", "search", "gear", "flag"].includes(icon)} /></span> <span class="label">${label}</span> <${Badge} n=${badge} label=${name} /></a>`;
  const liveText = { open: "● Live", reconnecting: "○ Reconnecting…", offline: "○ Offline" }[liveState] || "○ Connecting…";
  return html`<${AppContext.Provider} value=${context}>
    <div class="shell">
      <nav class="sidebar" aria-label="Warble">
        <a class="logo" href="#/home" aria-label="Warble home"><${Logo} /> <span class="label">Warble</span></a>
        ${link("home", "#/home", "Home", "home", counts.home)}
        ${link("search", "#/search", "Search", "search")}
        ${link("notifications", "#/notifications", "Notifications", "bell", notificationsUnread)}
        ${link("messages", "#/messages", "Messages", "mail", counts.message)}
        ${link("discover", "#/discover", "Discover", "compass")}
        ${link("u", `#/u/${me.username}`, "Profile", "user", 0, "wide")}
        ${link("sessions", "#/sessions", "Sessions", "lock", 0, "wide")}
        ${link("settings", "#/settings", "Settings", "gear", 0, "wide")}
        ${link("blocked", "#/blocked", "Blocked and muted", "shield", 0, "wide")}
        ${me.admin && link("moderation", "#/moderation", "Moderation", "flag", 0, "wide")}
        ${link("more", "#/more", "More", "more", 0, "phone")}
        <div class="me">
          <${Avatar} user=${me} size=${32} />
          <div class="label"><b>${me.display_name || me.username}</b><div class="handle">@${me.username}</div></div>
        </div>
        <div class=${"live-state " + liveState} data-testid="live-state" role="status">${liveText}</div>
        <button class="logout" onClick=${signOut}>Log out</button>
      </nav>
      <main class="main">${routeView(page, params, liveState)}</main>
    </div>
    <${MatchModal} match=${match} onClose=${() => setMatch(null)} />
    <div class="toasts">${toasts.map((t) => html`<div key=${t.id} class=${"toast " + t.kind} role="status">${t.text}</div>`)}</div>
  <//>`;
}

function routeView(page, params, liveState) {
  switch (page) {
    case "blocked": return html`<${BlockedPage} />`;
    case "more": return html`<${MorePage} liveState=${liveState} />`;
    case "tweet": return html`<${TweetPage} id=${params[0]} />`;
    case "u": return html`<${ProfilePage} by="username" lookup=${params[0]} tab=${params[1]} />`;
    case "user": return html`<${ProfilePage} by="id" lookup=${params[0]} tab=${params[1]} />`;
    case "notifications": return html`<${NotificationsPage} type=${params[0]} />`;
    case "messages": return html`<${MessagesPage} id=${params[0]} />`;
    case "discover": return html`<${DiscoverPage} />`;
    case "search": return html`<${SearchPage} query=${params.join("/")} />`;
    case "tag": return html`<${HashtagPage} tag=${params[0]} />`;
    case "sessions": return html`<${SessionsPage} />`;
    case "settings": return html`<${SettingsPage} />`;
    case "moderation": return html`<${ModerationPage} tab=${params[0]} />`;
    default: return html`<${HomeTimeline} />`;
  }
}

async function start() {
  const root = document.getElementById("app");
  try {
    const config = await (await fetch("config.json", { cache: "no-store" })).json();
    trackHistory();
    render(html`<${App} config=${config} />`, root);
  } catch {
    root.textContent = "Warble could not load its configuration (config.json).";
  }
}

start();
