// Signing up, logging in, a forgotten password and its reset, settings (password, sessions,
// the export of my data), the sessions list with revoke, and who I block and mute.
import { useEffect, useState } from "preact/hooks";
import { html, useApp, useRoute, ErrorNote, Time, Logo, Icon, back } from "./ui.js";
import { UserRows } from "./profile.js";
import { ApiError } from "./api.js";
import { MutedWords, MyReports } from "./moderation.js";

// What the sessions list calls this browser.
export function deviceName() {
  const ua = navigator.userAgent;
  const browser = /Edg\//.test(ua) ? "Edge" : /Firefox\//.test(ua) ? "Firefox" : /Chrom(e|ium)\//.test(ua) ? "Chromium" : /Safari\//.test(ua) ? "Safari" : "Browser";
  const os = /Android/.test(ua) ? "Android" : /iPhone|iPad/.test(ua) ? "iOS" : /Mac OS/.test(ua) ? "macOS" : /Windows/.test(ua) ? "Windows" : /Linux/.test(ua) ? "Linux" : "";
  return `${browser}${os ? " on " + os : ""} (web)`;
}

function withoutField(error, name) {
  const left = ((error && error.details) || []).filter((d) => d.field !== name);
  if (!left.length) return null;
  return new ApiError(error.status, error.code, error.message, left, error.retryAfter);
}

export function AuthScreen({ api, onSignedIn, notice }) {
  const mode = useRoute()[0] === "signup" ? "signup" : "login";
  const [form, setForm] = useState({ login: "", username: "", email: "", password: "" });
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  // Editing a field takes back what the error said about it (and an error about no field):
  // what is left on screen is still true.
  const field = (name) => (e) => {
    setForm({ ...form, [name]: e.currentTarget.value });
    setError((was) => withoutField(was, name));
  };

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
      <h1 class="auth-title">${mode === "login" ? "Log in to Warble" : "Create your Warble account"}</h1>
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
        ${mode === "login" && html`<p class="auth-aside"><a href="#/forgot">Forgot your password?</a></p>`}
      </form>
    </div>
  </main>`;
}

// "Forgot password": the address to mail a reset link to. The answer is the same whether or
// not the address has an account (API.md), and so is what the page says.
export function ForgotScreen({ api }) {
  const [email, setEmail] = useState("");
  const [sent, setSent] = useState(false);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);

  async function submit(event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.requestReset(email);
      setSent(true);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  return html`<main class="auth">
    <div class="auth-card">
      <div class="logo"><${Logo} /> Warble</div>
      <h1 class="auth-title">Reset your password</h1>
      ${sent
        ? html`<p class="notice" role="status">If ${email} belongs to an account, a link to choose a new password is on its way. It works once, for 30 minutes.</p>
               <p class="auth-aside"><a href="#/login">Back to log in</a></p>`
        : html`<form class="form" onSubmit=${submit}>
            <p class="small">Enter the email address of your account: we will mail you a link to choose a new password.</p>
            <label>Email <input name="email" type="email" autocomplete="email" value=${email} onInput=${(e) => setEmail(e.currentTarget.value)} required /></label>
            <${ErrorNote} error=${error} />
            <button type="submit" class="primary wide" disabled=${busy}>Send the link</button>
            <p class="auth-aside"><a href="#/login">Back to log in</a></p>
          </form>`}
    </div>
  </main>`;
}

// The email's link opens this page with ?token=… in its query. The token is taken out of the
// address bar at once (it stays out of the history and of any Referer) and kept in memory.
function takeResetToken() {
  const query = new URLSearchParams(location.search);
  const token = query.get("token");
  if (token) {
    query.delete("token");
    const rest = query.toString();
    history.replaceState(null, "", location.pathname + (rest ? "?" + rest : "") + location.hash);
  }
  return token;
}

export function ResetScreen({ api, onDone }) {
  const [token] = useState(takeResetToken);
  const [form, setForm] = useState({ password: "", again: "" });
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const field = (name) => (e) => setForm({ ...form, [name]: e.currentTarget.value });

  async function submit(event) {
    event.preventDefault();
    if (form.password !== form.again) {
      setError({ text: "The two passwords differ." });
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api.confirmReset(token, form.password);
      onDone("Your password was changed and every session signed out. Log in with the new password.");
    } catch (e) {
      setError(e.code === "invalid_token" ? { text: "This link is unknown, used or expired. Ask for a new one." } : e);
    } finally {
      setBusy(false);
    }
  }

  return html`<main class="auth">
    <div class="auth-card">
      <div class="logo"><${Logo} /> Warble</div>
      <h1 class="auth-title">Choose a new password</h1>
      ${token
        ? html`<form class="form" onSubmit=${submit}>
            <label>New password <input name="password" type="password" autocomplete="new-password" minLength="8" value=${form.password} onInput=${field("password")} required /></label>
            <label>New password, again <input name="again" type="password" autocomplete="new-password" minLength="8" value=${form.again} onInput=${field("again")} required /></label>
            <${ErrorNote} error=${error} />
            <button type="submit" class="primary wide" disabled=${busy}>Set the new password</button>
            <p class="auth-aside"><a href="#/forgot">Ask for a new link</a></p>
          </form>`
        : html`<p class="error" role="alert">This page needs the link from the reset email.</p>
               <p class="auth-aside"><a href="#/forgot">Ask for a reset link</a></p>`}
    </div>
  </main>`;
}

// Settings: the password, the sessions, my data, and deleting the account.
export function SettingsPage() {
  const { api, me, toast, endSession } = useApp();
  const [form, setForm] = useState({ current: "", password: "" });
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [exporting, setExporting] = useState(false);
  const [sessionsKey, setSessionsKey] = useState(0);
  const field = (name) => (e) => setForm({ ...form, [name]: e.currentTarget.value });

  async function changePassword(event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.changePassword(form.current, form.password);
      setForm({ current: "", password: "" });
      setSessionsKey((k) => k + 1);  // the other sessions are gone: list them again
      toast("Password changed. Your other sessions were signed out.");
    } catch (e) {
      setError(e.code === "invalid_credentials" ? { text: "The current password is wrong." } : e);
    } finally {
      setBusy(false);
    }
  }

  async function download() {
    setExporting(true);
    try {
      const data = await api.exportMe();
      const blob = new Blob([JSON.stringify(data, null, 2)], { type: "application/json" });
      const url = URL.createObjectURL(blob);
      const a = document.createElement("a");
      a.href = url;
      a.download = `warble-${me.username}.json`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      toast("Your data is downloaded.");
    } catch (e) {
      toast(e);
    } finally {
      setExporting(false);
    }
  }

  // On a phone Settings is reached through More and the tab bar has no way back: a Back of its
  // own there (the sidebar, always in view on wider screens, needs none).
  return html`<section class="page settings">
    <h1><button class="back phone-only" onClick=${back} title="Back" aria-label="Back"><${Icon} name="back" /></button> Settings</h1>
    <h2 class="sub">Password</h2>
    <form class="form card" onSubmit=${changePassword} data-testid="change-password">
      <label>Current password <input name="current_password" type="password" autocomplete="current-password" value=${form.current} onInput=${field("current")} required /></label>
      <label>New password <input name="password" type="password" autocomplete="new-password" minLength="8" value=${form.password} onInput=${field("password")} required /></label>
      <p class="small">Changing it signs out every other device.</p>
      <${ErrorNote} error=${error} />
      <button type="submit" class="primary" disabled=${busy}>Change password</button>
    </form>
    <h2 class="sub">Sessions</h2>
    <${SessionsList} key=${sessionsKey} />
    <h2 class="sub">Muted words</h2>
    <${MutedWords} />
    <h2 class="sub">Your reports</h2>
    <${MyReports} />
    <h2 class="sub">Your data</h2>
    <div class="card">
      <p class="small">Everything Warble holds about you (profile, sessions, tweets, likes, follows, blocks, mutes, messages, notifications, media, location) as one JSON file.</p>
      <button onClick=${download} disabled=${exporting}>${exporting ? "Preparing…" : "Download my data"}</button>
    </div>
    <h2 class="sub">Delete account</h2>
    <${DeleteAccount} api=${api} endSession=${endSession} />
  </section>`;
}

// Deleting the account (API.md): final. The password is asked again; from the 202 on the
// account is gone, so this browser is signed out at once.
function DeleteAccount({ api, endSession }) {
  const [password, setPassword] = useState("");
  const [sure, setSure] = useState(false);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);

  async function submit(event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.deleteAccount(password);
      endSession("Your account was deleted. What it made disappears from Warble within a minute.");
    } catch (e) {
      setError(e.code === "invalid_credentials" ? { text: "The password is wrong." } : e);
      setBusy(false);
    }
  }

  return html`<form class="form card" onSubmit=${submit} data-testid="delete-account">
    <p class="small">This is final: your profile, tweets, likes, follows, messages and media are removed for everyone, and your username and email become free for anyone to take.</p>
    <label>Password <input name="password" type="password" autocomplete="current-password" value=${password} onInput=${(e) => setPassword(e.currentTarget.value)} required /></label>
    <label class="check"><input type="checkbox" checked=${sure} onChange=${(e) => setSure(e.currentTarget.checked)} /> I understand that this cannot be undone</label>
    <${ErrorNote} error=${error} />
    <button type="submit" class="danger" disabled=${busy || !sure}>Delete my account</button>
  </form>`;
}

export function SessionsPage() {
  return html`<section class="page">
    <h1><button class="back phone-only" onClick=${back} title="Back" aria-label="Back"><${Icon} name="back" /></button> Sessions</h1>
    <p class="hint">Every device where you are logged in. Revoking one signs that device out at its next request.</p>
    <${SessionsList} />
  </section>`;
}

function SessionsList() {
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

  return html`<div>
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
  </div>`;
}

// Who I block and who I mute (a profile's buttons undo either).
export function BlockedPage() {
  const { api } = useApp();
  return html`<section class="page">
    <h1><button class="back phone-only" onClick=${back} title="Back" aria-label="Back"><${Icon} name="back" /></button> Blocked and muted</h1>
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
      <li><a href="#/settings"><${Icon} name="gear" /> Settings</a></li>
      <li><a href="#/sessions"><${Icon} name="lock" /> Sessions</a></li>
      <li><a href="#/blocked"><${Icon} name="shield" /> Blocked and muted</a></li>
      ${me.admin && html`<li><a href="#/moderation"><${Icon} name="flag" /> Moderation</a></li>`}
      <li><button onClick=${signOut}><${Icon} name="logout" /> Log out</button></li>
    </ul>
    <p class="hint">${liveState === "open" ? "Connected: new messages and notifications arrive live." : liveState === "offline" ? "Offline: this device has no network. Warble connects again when it is back." : "Reconnecting: what arrives meanwhile shows once connected."}</p>
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
