// Signing up, logging in, the sessions list with revoke, and who I block and mute.
import { useEffect, useState } from "preact/hooks";
import { html, useApp, useRoute, ErrorNote, Time, Logo, Icon } from "./ui.js";
import { UserRows } from "./profile.js";

// What the sessions list calls this browser.
export function deviceName() {
  const ua = navigator.userAgent;
  const browser = /Edg\//.test(ua) ? "Edge" : /Firefox\//.test(ua) ? "Firefox" : /Chrom(e|ium)\//.test(ua) ? "Chromium" : /Safari\//.test(ua) ? "Safari" : "Browser";
  const os = /Android/.test(ua) ? "Android" : /iPhone|iPad/.test(ua) ? "iOS" : /Mac OS/.test(ua) ? "macOS" : /Windows/.test(ua) ? "Windows" : /Linux/.test(ua) ? "Linux" : "";
  return `${browser}${os ? " on " + os : ""} (web)`;
}

export function AuthScreen({ api, onSignedIn, notice }) {
  const mode = useRoute()[0] === "signup" ? "signup" : "login";
  const [form, setForm] = useState({ login: "", username: "", email: "", password: "" });
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const field = (name) => (e) => setForm({ ...form, [name]: e.currentTarget.value });

  async function submit(event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const answer = mode === "signup"
        ? await api.signup(form.username, form.email, form.password, deviceName())
        : await api.login(form.login, form.password, deviceName());
      onSignedIn(answer);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  return html`<main class="auth">
    <div class="auth-card">
      <div class="logo"><${Logo} /> Warble</div>
      <p class="tagline">What's happening nearby, live.</p>
      ${notice && html`<p class="notice" role="status">${notice}</p>`}
      <nav class="tabs">
        <a class=${mode === "login" ? "on" : ""} href="#/login" onClick=${() => setError(null)}>Log in</a>
        <a class=${mode === "signup" ? "on" : ""} href="#/signup" onClick=${() => setError(null)}>Sign up</a>
      </nav>
      <form class="form" onSubmit=${submit}>
        ${mode === "login"
          ? html`<label>Username or email <input name="login" autocomplete="username" value=${form.login} onInput=${field("login")} required /></label>`
          : html`<label>Username <input name="username" autocomplete="username" value=${form.username} onInput=${field("username")} required maxLength="15" /></label>
                 <label>Email <input name="email" type="email" autocomplete="email" value=${form.email} onInput=${field("email")} required /></label>`}
        <label>Password <input name="password" type="password" autocomplete=${mode === "login" ? "current-password" : "new-password"} value=${form.password} onInput=${field("password")} required /></label>
        <${ErrorNote} error=${error} />
        <button type="submit" class="primary wide" disabled=${busy}>${mode === "login" ? "Log in" : "Create account"}</button>
      </form>
    </div>
  </main>`;
}

export function SessionsPage() {
  const { api, toast, signOut } = useApp();
  const [sessions, setSessions] = useState(null);
  const [error, setError] = useState(null);
  const load = () => api.sessions().then((page) => setSessions(page.items), setError);
  useEffect(() => { load(); }, []);

  async function revoke(session) {
    if (session.current) return signOut();
    try {
      await api.revoke(session.session_id);
      setSessions((items) => items.filter((s) => s.session_id !== session.session_id));
      toast("The session was revoked: that device is signed out.");
    } catch (e) {
      toast(e);
    }
  }

  return html`<section class="page">
    <h1>Sessions</h1>
    <p class="hint">Every device where you are logged in. Revoking one signs that device out at its next request.</p>
    <${ErrorNote} error=${error} />
    <ul class="sessions">
      ${(sessions || []).map((s) => html`<li key=${s.session_id} class=${s.current ? "current" : ""} data-session=${s.session_id}>
        <div>
          <b>${s.device || "Unnamed device"}</b> ${s.current && html`<span class="rel-badge">This device</span>`}
          <div class="small">Signed in <${Time} iso=${s.created_at} /> · last seen <${Time} iso=${s.last_seen_at} /> · expires ${new Date(s.expires_at).toLocaleDateString()}</div>
        </div>
        <button class=${s.current ? "" : "danger"} onClick=${() => revoke(s)}>${s.current ? "Log out" : "Revoke"}</button>
      </li>`)}
    </ul>
  </section>`;
}

// Who I block and who I mute (a profile's buttons undo either).
export function BlockedPage() {
  const { api } = useApp();
  return html`<section class="page">
    <h1>Blocked and muted</h1>
    <p class="hint">Blocked people cannot follow you, message you or see you in Discover; muted people's tweets leave your home timeline. Undo either from their profile.</p>
    <${PeopleList} title="Blocked" load=${() => api.blocks()} empty="You block nobody." />
    <${PeopleList} title="Muted" load=${() => api.mutes()} empty="You mute nobody." />
  </section>`;
}

// On phones, what the tab bar has no room for.
export function MorePage({ liveState }) {
  const { me, signOut } = useApp();
  return html`<section class="page">
    <h1>More</h1>
    <ul class="more-links">
      <li><a href=${"#/u/" + encodeURIComponent(me.username)}><${Icon} name="user" /> Profile</a></li>
      <li><a href="#/sessions"><${Icon} name="lock" /> Sessions</a></li>
      <li><a href="#/blocked"><${Icon} name="shield" /> Blocked and muted</a></li>
      <li><button onClick=${signOut}><${Icon} name="logout" /> Log out</button></li>
    </ul>
    <p class="hint">${liveState === "open" ? "Connected: new messages and notifications arrive live." : "Reconnecting: what arrives meanwhile shows once connected."}</p>
  </section>`;
}

// The first page of the users I block or mute (most recent first); their profiles undo it.
function PeopleList({ title, load, empty }) {
  const [users, setUsers] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => { load().then((page) => setUsers(page.items), setError); }, []);
  return html`<div data-testid=${title.toLowerCase()}>
    <h2 class="sub">${title}</h2>
    <${ErrorNote} error=${error} />
    ${users && html`<${UserRows} users=${users} empty=${empty} />`}
  </div>`;
}
