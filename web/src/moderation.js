// Trust and safety (API.md "Reports and moderation"): the Report dialog of tweets, messages and
// profiles; the moderators' page (open and closed cases, resolve, suspensions); and, in
// Settings, muted words and my reports.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { html, useApp, usePaged, Sentinel, ErrorNote, Avatar, Icon, Time, userHref, back, plural } from "./ui.js";
import { MediaGrid } from "./media.js";

// API.md's reasons, in words, with what each covers.
export const REASONS = [
  ["spam", "Spam", "Ads, scams, fake accounts or the same thing over and over"],
  ["abuse", "Abuse or harassment", "Insults, threats, or piling on someone"],
  ["hate", "Hate", "Attacks on people for who they are"],
  ["violence", "Violence", "Threatening or glorifying violence"],
  ["sexual", "Sexual content", "Nudity or sexual content"],
  ["self_harm", "Self-harm", "Suicide or self-harm"],
  ["impersonation", "Impersonation", "Pretending to be someone else"],
  ["other", "Something else", "Say what in the comment"],
];
const REASON = Object.fromEntries(REASONS.map(([key, label]) => [key, label]));
const COMMENT_MAX = 1000; // characters, counted as the API counts them (code points)
const chars = (text) => [...text].length;

// "in 12 minutes", from a 429's Retry-After.
const inWords = (seconds) => {
  if (!seconds) return "later";
  if (seconds < 90) return "in a minute";
  if (seconds < 5400) return `in ${Math.round(seconds / 60)} minutes`;
  return `in ${Math.round(seconds / 3600)} hours`;
};

// Tab and Shift+Tab go round the dialog's controls, never out of it (a modal <dialog> would let
// them reach the browser's own controls). A radio group is one stop, as the browser makes it:
// its checked radio, else its first.
function keepTabInside(event, root) {
  if (event.key !== "Tab") return;
  const stops = [...root.querySelectorAll("input, textarea, button, a[href]")].filter((el, i, all) =>
    !el.disabled && (el.type !== "radio" || (root.querySelector(`input[name="${el.name}"]:checked`)
      ? el.checked : all.findIndex((o) => o.name === el.name) === i)));
  if (!stops.length) return;
  const first = stops[0];
  const last = stops[stops.length - 1];
  const at = document.activeElement;
  const atFirst = at === first || (first.type === "radio" && at.name === first.name);
  if (!root.contains(at) || (event.shiftKey ? atFirst : at === last)) {
    event.preventDefault();
    (event.shiftKey ? last : first).focus();
  }
}

// A modal <dialog> opened on mount: focus inside it, Escape closes it (the browser's `cancel`,
// then `close`), and focus goes back where it was.
function useModal() {
  const dialog = useRef(null);
  useEffect(() => {
    const d = dialog.current;
    const before = document.activeElement;
    d.showModal();
    return () => {
      if (d.open) d.close();
      if (before && before.isConnected) before.focus();
    };
  }, []);
  return dialog;
}

// A click on the backdrop (outside the dialog's box) closes it; one on its padding does not.
const outside = (event, dialog) => {
  const box = dialog.getBoundingClientRect();
  return event.target === dialog && (event.clientX < box.left || event.clientX > box.right || event.clientY < box.top || event.clientY > box.bottom);
};

// Report a tweet, a message or a profile: `target` is {type, id, what} ("Ann's tweet"). A repeat
// (200) is thanked as the first report was; the reported person is never told.
export function ReportDialog({ target, onClose }) {
  const { api } = useApp();
  const dialog = useModal();
  const [reason, setReason] = useState(null);
  const [comment, setComment] = useState("");
  const [state, setState] = useState("form"); // form | sending | sent
  const [error, setError] = useState(null);
  const close = useRef(null);
  const left = COMMENT_MAX - chars(comment);
  useEffect(() => { if (state === "sent") close.current.focus(); }, [state]);

  async function submit(event) {
    event.preventDefault();
    if (!reason) return setError({ text: "Choose what is wrong." });
    if (left < 0) return;
    setState("sending");
    setError(null);
    try {
      await api.report(target.type, target.id, reason, comment.trim());
      setState("sent");
    } catch (e) {
      setState("form");
      setError(e.status === 429
        ? { text: `You have sent many reports in the last hour. Please try again ${inWords(e.retryAfter)}.` }
        : e);
    }
  }

  return html`<dialog ref=${dialog} class="modal report-dialog" aria-labelledby="report-title" onClose=${onClose}
      onKeyDown=${(e) => keepTabInside(e, e.currentTarget)} onClick=${(e) => outside(e, e.currentTarget) && onClose()}>
    ${state === "sent"
      ? html`<h2 id="report-title">Thanks, we'll review it</h2>
        <p role="status">Our moderators will look at ${target.what}. Nobody is told that you reported it.</p>
        <div class="row"><button ref=${close} class="primary" onClick=${onClose}>Close</button></div>`
      : html`<form onSubmit=${submit}>
        <h2 id="report-title">Report ${target.what}</h2>
        <fieldset class="reasons">
          <legend>What is wrong with it?</legend>
          ${REASONS.map(([key, label, about]) => html`<label class="reason" key=${key}>
            <input type="radio" name="reason" value=${key} checked=${reason === key}
              onChange=${() => { setReason(key); setError(null); }} />
            <span><b>${label}</b>${about && html`<span class="small"> ${about}</span>`}</span>
          </label>`)}
        </fieldset>
        <label class="comment">Anything the moderators should know? (optional)
          <textarea name="comment" rows="3" value=${comment} onInput=${(e) => setComment(e.currentTarget.value)}
            aria-describedby="report-left"></textarea></label>
        <p id="report-left" class=${"counter" + (left < 0 ? " over" : "")} data-testid="comment-counter">${left < 0 ? `${-left} ${plural(-left, "character")} too many` : `${left} ${plural(left, "character")} left`}</p>
        <${ErrorNote} error=${error} />
        <div class="row"><button type="button" onClick=${onClose}>Cancel</button>
          <button type="submit" class="primary" disabled=${state === "sending" || left < 0}>${state === "sending" ? "Sending…" : "Report"}</button></div>
      </form>`}
  </dialog>`;
}

// ---- the moderators' page -----------------------------------------------------------------
const KINDS = { tweet: "Tweet", message: "Message", user: "Profile" };
const DONE = { dismiss: "Dismissed", remove: "Removed", suspend: "Suspended" };

export function ModerationPage({ tab }) {
  const { me } = useApp();
  const status = tab === "closed" ? "closed" : "open";
  return html`<section class="page moderation">
    <h1><button class="back phone-only" onClick=${back} title="Back" aria-label="Back"><${Icon} name="back" /></button> Moderation</h1>
    ${me.admin
      ? html`<nav class="tabs" aria-label="Cases">
          <a class=${status === "open" ? "on" : ""} href="#/moderation" aria-current=${status === "open" ? "page" : undefined}>Open</a>
          <a class=${status === "closed" ? "on" : ""} href="#/moderation/closed" aria-current=${status === "closed" ? "page" : undefined}>Closed</a>
        </nav>
        <${Cases} key=${status} status=${status} />`
      : html`<p class="error" role="alert">Only moderators can see this page.</p>`}
  </section>`;
}

function Cases({ status }) {
  const { api } = useApp();
  const fetchPage = useCallback((cursor) => api.cases(status, cursor), [api, status]);
  const paged = usePaged(fetchPage, status);
  const closed = (id) => paged.update((items) => items.filter((c) => c.id !== id));
  return html`<div>
    <p class="hint">${status === "open"
      ? "Most reported first, then the oldest. What was reported is shown as it was at the first report."
      : "Closed cases, the latest closed first."}</p>
    <ul class="cases">
      ${paged.items.map((c) => html`<${CaseCard} key=${c.id} item=${c} onClosed=${closed} onStale=${paged.refresh} />`)}
    </ul>
    <${ErrorNote} error=${paged.error} />
    ${!paged.loading && !paged.error && paged.items.length === 0 && html`<p class="empty">${status === "open" ? "No open cases. Nothing waits for a moderator." : "No closed cases."}</p>`}
    <${Sentinel} onVisible=${paged.more} done=${paged.done} loading=${paged.loading} />
  </div>`;
}

function Snapshot({ item }) {
  const s = item.snapshot || {};
  if (item.target_type === "user") {
    return html`<div class="snapshot"><b>${s.display_name}</b>${s.bio ? html`<p>${s.bio}</p>` : html`<p class="small">No bio.</p>`}</div>`;
  }
  return html`<div class="snapshot">
    ${s.text && html`<p>${s.text}</p>`}
    ${s.media && s.media.length > 0 && html`<${MediaGrid} media=${s.media} />`}
  </div>`;
}

function CaseCard({ item, onClosed, onStale }) {
  const { api, toast } = useApp();
  const [note, setNote] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const subject = item.subject;
  const name = subject.display_name || subject.username;
  const open = item.status === "open";
  const noun = KINDS[item.target_type].toLowerCase();
  const reasons = Object.entries(item.reasons || {}).sort((a, b) => b[1] - a[1]);

  async function resolve(action) {
    if (action === "remove" && !confirm(`Remove this ${noun} for everyone?`)) return;
    if (action === "suspend" && !confirm(`Suspend @${subject.username}? They are signed out and hidden from everyone until the suspension is lifted.`)) return;
    setBusy(true);
    setError(null);
    try {
      await api.resolveCase(item.id, action, note.trim());
      toast(`${DONE[action]}: the case is closed.`);
      onClosed(item.id);
    } catch (e) {
      setBusy(false);
      if (e.status === 409) {
        // Another moderator closed it meanwhile: the queue is read again.
        toast("Already resolved: another moderator closed this case.");
        onStale();
      } else {
        setError(e);
      }
    }
  }

  return html`<li class="case" data-case=${item.id} aria-labelledby=${"case-" + item.id}>
    <div class="case-head">
      <a href=${userHref(subject)} aria-label=${"@" + subject.username} tabindex="-1"><${Avatar} user=${subject} size=${40} /></a>
      <div class="case-who">
        <h2 id=${"case-" + item.id} class="case-title">${KINDS[item.target_type]} by <a href=${userHref(subject)}>${name}</a> <span class="handle">@${subject.username}</span></h2>
        <div class="small">${item.reporter_count} ${plural(item.reporter_count, "person", "people")} reported this · opened <${Time} iso=${item.opened_at} />
          ${item.target_type === "tweet" && open && html` · <a href=${"#/tweet/" + item.target_id}>Open the tweet</a>`}</div>
      </div>
    </div>
    <${Snapshot} item=${item} />
    <ul class="reason-counts" aria-label="Reasons">
      ${reasons.map(([key, n]) => html`<li key=${key} class="rel-badge">${REASON[key] || key} ${n}</li>`)}
    </ul>
    ${open
      ? html`<div class="resolve">
          <label>Note for the moderators (optional) <input name="note" maxLength="1000" value=${note} onInput=${(e) => setNote(e.currentTarget.value)} /></label>
          <${ErrorNote} error=${error} />
          <div class="row wrap">
            <button onClick=${() => resolve("dismiss")} disabled=${busy}>Dismiss</button>
            ${item.target_type !== "user" && html`<button class="danger" onClick=${() => resolve("remove")} disabled=${busy}>Remove ${noun}</button>`}
            <button class="danger" onClick=${() => resolve("suspend")} disabled=${busy}>Suspend @${subject.username}</button>
          </div>
        </div>`
      : html`<div class="resolved small" data-testid="resolved">${DONE[item.action] || "Closed"} <${Time} iso=${item.closed_at} />${item.note ? html` · “${item.note}”` : ""}</div>
        <${SuspensionButton} user=${subject} suspended=${item.action === "suspend"} />`}
  </li>`;
}

// Suspend an account, or lift its suspension (PUT / DELETE /v1/admin/users/{id}/suspension). A
// server without suspensions answers 404 or 405: said in words, nothing changes here.
function SuspensionButton({ user, suspended: was }) {
  const { api, toast } = useApp();
  const [suspended, setSuspended] = useState(was);
  const [busy, setBusy] = useState(false);
  async function toggle() {
    const on = !suspended;
    if (on && !confirm(`Suspend @${user.username}? They are signed out and hidden from everyone until the suspension is lifted.`)) return;
    setBusy(true);
    try {
      const answer = await api.suspend(user.id, on);
      setSuspended(answer.suspended);
      toast(answer.suspended ? `@${user.username} is suspended.` : `@${user.username}'s suspension is lifted.`);
    } catch (e) {
      toast(e.status === 405 || e.status === 404
        ? { text: `Warble could not change @${user.username}'s suspension: the account is gone, or this server does not offer suspensions yet.` }
        : e);
    } finally {
      setBusy(false);
    }
  }
  return html`<div class="row"><button class=${suspended ? "" : "danger"} onClick=${toggle} disabled=${busy}>
    ${suspended ? "Lift suspension" : "Suspend"}<span class="visually-hidden"> @${user.username}</span></button></div>`;
}

// ---- Settings: muted words and my reports -------------------------------------------------
const WORD_MAX = 50;
const WORDS_MAX = 100;
const folded = (word) => word.normalize("NFKC").toLowerCase();

// A 400 of the list in words: "words[3]" is the list's fourth word, named by its place and, when
// it has any, its visible characters.
function listError(error, sent) {
  const details = (error && error.details) || [];
  if (!details.length) return error;
  return {
    text: details.map((d) => {
      const at = /^words\[(\d+)\]$/.exec(d.field);
      if (!at) return `Muted words: ${d.message}.`;
      const visible = (sent[Number(at[1])] || "").replace(/[\p{C}\p{Z}\s]+/gu, " ").trim();
      return `Word ${Number(at[1]) + 1}${visible ? ` (“${visible}”)` : ""} was refused: ${d.message}.`;
    }).join(" "),
  };
}

export function MutedWords() {
  const { api } = useApp();
  const [words, setWords] = useState(null);
  const [word, setWord] = useState("");
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => { api.mutedWords().then((answer) => setWords(answer.words), setError); }, []);

  // The whole list is sent (PUT replaces it); the answer is the list as stored.
  async function save(next) {
    setBusy(true);
    setError(null);
    try {
      setWords((await api.setMutedWords(next)).words);
      return true;
    } catch (e) {
      setError(listError(e, next));
      return false;
    } finally {
      setBusy(false);
    }
  }

  async function add(event) {
    event.preventDefault();
    const typed = word.trim();
    const problem = !typed ? "Type a word or a #hashtag to mute."
      : chars(typed) > WORD_MAX ? `A muted word is at most ${WORD_MAX} characters; this one has ${chars(typed)}.`
      : words.some((w) => folded(w) === folded(typed)) ? `You already mute “${typed}”.`
      : words.length >= WORDS_MAX ? `You mute ${WORDS_MAX} words, the most Warble keeps: remove one first.`
      : null;
    if (problem) return setError({ text: problem });
    if (await save([...words, typed])) setWord("");
  }

  return html`<div class="card muted-words-card" data-testid="muted-words">
    <p class="small">Tweets holding a muted word (a whole word, in any case) leave your home timeline, hashtag pages and replies, and their mentions and replies do not notify you. Your own tweets are never hidden.</p>
    <form class="row" onSubmit=${add}>
      <label>Mute a word or a #hashtag <input name="muted_word" value=${word} autocomplete="off" aria-describedby="muted-hint"
        onInput=${(e) => { setWord(e.currentTarget.value); setError(null); }} /></label>
      <button type="submit" class="primary" disabled=${busy || words === null}>Mute</button>
    </form>
    <p id="muted-hint" class="small">Start with # to mute a hashtag only: <b>#finale</b> hides tweets tagged #finale. A plain word hides its hashtag too.</p>
    <${ErrorNote} error=${error} />
    ${words === null && !error && html`<p class="small">Loading…</p>`}
    ${words && (words.length
      ? html`<p class="small" data-testid="muted-count">${words.length} of ${WORDS_MAX} words</p>
        <ul class="muted-words">${words.map((w) => html`<li key=${w}><span class="word">${w}</span>
          <button onClick=${() => save(words.filter((x) => x !== w))} disabled=${busy} aria-label=${`Unmute ${w}`}>Unmute</button></li>`)}</ul>`
      : html`<p class="empty">You mute no words.</p>`)}
  </div>`;
}

const STATUS = { open: "Under review", actioned: "Action taken", dismissed: "No action taken" };
const WHAT = { tweet: "A tweet", message: "A message", user: "A profile" };

export function MyReports() {
  const { api } = useApp();
  const fetchPage = useCallback((cursor) => api.myReports(cursor), [api]);
  const paged = usePaged(fetchPage, "my-reports");
  const link = (r) => (r.target_type === "tweet" ? `#/tweet/${r.target_id}` : r.target_type === "user" ? `#/user/${r.target_id}` : null);
  return html`<div class="card" data-testid="my-reports">
    <p class="small">What you reported, and what the moderators did. The people you report are never told.</p>
    ${paged.items.length > 0 && html`<ul class="my-reports">${paged.items.map((r) => html`<li key=${r.id} data-report=${r.id}>
      <div><b>${link(r) ? html`<a href=${link(r)}>${WHAT[r.target_type]}</a>` : WHAT[r.target_type]}</b> for ${(REASON[r.reason] || r.reason).toLowerCase()}
        <div class="small">Sent <${Time} iso=${r.created_at} />${r.resolved_at ? html` · closed <${Time} iso=${r.resolved_at} />` : ""}</div></div>
      <span class=${"report-status " + r.status} data-testid="report-status">${STATUS[r.status] || r.status}</span>
    </li>`)}</ul>`}
    <${ErrorNote} error=${paged.error} />
    ${!paged.loading && !paged.error && paged.items.length === 0 && html`<p class="empty">You have reported nothing.</p>`}
    ${!paged.done && !paged.loading && html`<button onClick=${paged.more}>Show more</button>`}
  </div>`;
}
