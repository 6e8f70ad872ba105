// Profiles by username (#/u/name) or id (#/user/id): counts, follow/unfollow, the relationship
// badge, the connection degree, mutual friends, block and mute, and the user's tweets and lists.
import { useCallback, useEffect, useState } from "preact/hooks";
import { html, useApp, usePaged, Sentinel, ErrorNote, Avatar, userHref, go, plural } from "./ui.js";
import { TweetList } from "./tweets.js";
import { ReportDialog } from "./moderation.js";

const BADGES = { following: "Following", followed_by: "Follows you", friends: "Friends", none: null };
const LISTS = {
  followers: (api, id, cursor) => api.followers(id, cursor),
  following: (api, id, cursor) => api.following(id, cursor),
  friends: (api, id, cursor) => api.friends(id, cursor),
};
const TABS = [
  ["tweets", "Tweets"],
  ["followers", "Followers"],
  ["following", "Following"],
  ["friends", "Friends"],
  ["mutual", "Mutual"],
];

export function ProfilePage({ by, lookup, tab: asked }) {
  const tab = TABS.some(([t]) => t === asked) ? asked : "tweets";
  const { api, me, toast, live } = useApp();
  const [user, setUser] = useState(null);
  const [error, setError] = useState(null);
  const [degree, setDegree] = useState(null);
  const [mutual, setMutual] = useState(null);
  const [busy, setBusy] = useState(false);
  const [editing, setEditing] = useState(false);
  const [flags, setFlags] = useState(null); // {blocking, blocked_by, muting}
  const [reporting, setReporting] = useState(false);

  useEffect(() => {
    setUser(null);
    setError(null);
    setDegree(null);
    setMutual(null);
    setFlags(null);
    (by === "id" ? api.user(lookup) : api.userByName(lookup)).then(setUser, setError);
  }, [by, lookup]);

  const self = user && me && user.id === me.id;
  useEffect(() => {
    if (!user || self) return;
    api.degree(user.id).then(setDegree, () => setDegree(null));
    api.mutual(user.id).then(setMutual, () => setMutual(null));
  }, [user && user.id, user && user.relationship]);
  useEffect(() => {
    if (!user || self) return;
    api.relationship(user.id).then(setFlags, () => setFlags(null));
  }, [user && user.id]);

  // They follow me (back) while their profile is open: its badge, degree and counts change.
  useEffect(() => live && user && !self && live.on((event, data) => {
    if (event === "notification" && data.type === "follow" && data.actor && data.actor.id === user.id) {
      api.user(user.id).then(setUser, () => {});
    }
  }), [live, user && user.id]);

  async function toggleFollow() {
    setBusy(true);
    const following = user.relationship === "following" || user.relationship === "friends";
    try {
      const answer = following ? await api.unfollow(user.id) : await api.follow(user.id);
      setUser((u) => ({ ...u, relationship: answer.relationship, followers_count: u.followers_count + (following ? -1 : 1) }));
    } catch (e) {
      toast(e);
    } finally {
      setBusy(false);
    }
  }

  // Block / unblock, mute / unmute. A block ends the follows both ways: the profile is read again.
  async function toggle(kind) {
    const on = !flags[kind === "block" ? "blocking" : "muting"];
    const name = user.display_name || user.username;
    if (kind === "block" && on && !confirm(`Block ${name}? They will no longer follow you or see your tweets, and you will no longer follow them.`)) return;
    setBusy(true);
    try {
      const answer = await api[kind](user.id, on);
      setFlags((f) => ({ ...f, ...answer }));
      if (kind === "block" && on) setUser(await api.user(user.id));
      toast(kind === "block" ? (on ? "Blocked." : "Unblocked.") : (on ? "Muted: their tweets leave your home timeline." : "Unmuted."));
    } catch (e) {
      toast(e);
    } finally {
      setBusy(false);
    }
  }

  async function message() {
    try {
      const conversation = await api.openConversation(user.id);
      go("messages/" + conversation.id);
    } catch (e) {
      toast(e);
    }
  }

  if (error) return html`<section class="page"><h1>Profile</h1><${ErrorNote} error=${error} /></section>`;
  if (!user) return html`<section class="page"><p class="empty">Loading…</p></section>`;
  const following = user.relationship === "following" || user.relationship === "friends";
  const blocked = flags && (flags.blocking || flags.blocked_by);
  const base = `#/u/${encodeURIComponent(user.username)}`;
  return html`<section class="page profile">
    <div class="profile-head">
      <${Avatar} user=${user} size=${72} />
      <div class="profile-id">
        <h1>${user.display_name || user.username}</h1>
        <div class="handle">@${user.username}
          ${BADGES[user.relationship] && html` <span class="rel-badge" data-testid="relationship">${BADGES[user.relationship]}</span>`}
          ${flags && flags.blocking && html` <span class="rel-badge block" data-testid="blocking">Blocked</span>`}
          ${flags && flags.blocked_by && html` <span class="rel-badge block" data-testid="blocked-by">Blocked you</span>`}
          ${flags && flags.muting && html` <span class="rel-badge" data-testid="muting">Muted</span>`}
          ${degree && degree.degree && html` <span class="degree" title="Connection degree on the friends graph">${degree.label}</span>`}
        </div>
      </div>
      <div class="profile-actions">
        ${self ? html`<button onClick=${() => setEditing(!editing)}>Edit profile</button>`
          : html`${flags && !blocked && html`<button onClick=${message}>Message</button>`}
            ${!blocked && html`<button class=${following ? "" : "primary"} onClick=${toggleFollow} disabled=${busy}>${following ? "Unfollow" : "Follow"}</button>`}
            ${flags && html`<button onClick=${() => toggle("mute")} disabled=${busy}>${flags.muting ? "Unmute" : "Mute"}</button>
              <button class=${flags.blocking ? "" : "danger"} onClick=${() => toggle("block")} disabled=${busy}>${flags.blocking ? "Unblock" : "Block"}</button>`}
            <button onClick=${() => setReporting(true)} aria-label=${"Report @" + user.username}>Report</button>`}
      </div>
    </div>
    ${reporting && html`<${ReportDialog} target=${{ type: "user", id: user.id, what: `@${user.username}'s profile` }} onClose=${() => setReporting(false)} />`}
    ${editing ? html`<${EditProfile} user=${user} onDone=${(u) => { setEditing(false); if (u) setUser(u); }} />`
      : user.bio && html`<p class="bio">${user.bio}</p>`}
    <div class="counts">
      <a href=${base}><b>${user.tweet_count}</b> ${plural(user.tweet_count, "Tweet")}</a>
      <a href=${base + "/following"}><b>${user.following_count}</b> Following</a>
      <a href=${base + "/followers"}><b>${user.followers_count}</b> ${plural(user.followers_count, "Follower")}</a>
      ${mutual && html`<a href=${base + "/mutual"}><b>${mutual.count}</b> ${plural(mutual.count, "mutual friend")}</a>`}
    </div>
    <nav class="tabs fit" aria-label="Profile sections">
      ${TABS.filter(([t]) => !(self && t === "mutual")).map(([t, label]) => html`<a class=${t === tab ? "on" : ""} href=${t === "tweets" ? base : `${base}/${t}`}>${label}</a>`)}
    </nav>
    ${tab === "tweets" ? html`<${UserTweets} id=${user.id} />`
      : tab === "mutual" ? html`<${UserRows} users=${mutual ? mutual.items : []} empty="No mutual friends." />`
      : html`<${UserListTab} id=${user.id} kind=${tab} />`}
  </section>`;
}

function UserTweets({ id }) {
  const { api } = useApp();
  const fetchPage = useCallback((cursor) => api.userTweets(id, cursor), [api, id]);
  return html`<${TweetList} paged=${usePaged(fetchPage, id)} empty="No tweets yet." />`;
}

function UserListTab({ id, kind }) {
  const { api } = useApp();
  const fetchPage = useCallback((cursor) => LISTS[kind](api, id, cursor), [api, id, kind]);
  const paged = usePaged(fetchPage, id + kind);
  return html`<div>
    <${UserRows} users=${paged.items} empty=${paged.loading ? "" : "Nobody here yet."} />
    <${ErrorNote} error=${paged.error} />
    <${Sentinel} onVisible=${paged.more} done=${paged.done} loading=${paged.loading} />
  </div>`;
}

export function UserRows({ users, empty }) {
  if (!users.length) return empty ? html`<p class="empty">${empty}</p>` : null;
  return html`<ul class="user-rows">${users.map((u) => html`<li key=${u.id}>
    <a href=${userHref(u)} aria-label=${"@" + u.username} tabindex="-1"><${Avatar} user=${u} size=${36} /></a>
    <div><a class="name" href=${userHref(u)}>${u.display_name || u.username}</a> <span class="handle">@${u.username}</span>
      ${BADGES[u.relationship] && html` <span class="rel-badge">${BADGES[u.relationship]}</span>`}
      ${u.bio && html`<div class="bio small">${u.bio}</div>`}</div>
  </li>`)}</ul>`;
}

function EditProfile({ user, onDone }) {
  const { api, setMe } = useApp();
  const [name, setName] = useState(user.display_name || "");
  const [bio, setBio] = useState(user.bio || "");
  const [error, setError] = useState(null);
  async function save(e) {
    e.preventDefault();
    try {
      const updated = await api.updateMe({ display_name: name, bio });
      setMe((m) => ({ ...m, ...updated }));
      onDone(updated);
    } catch (err) {
      setError(err);
    }
  }
  return html`<form class="card form" onSubmit=${save}>
    <label>Display name <input value=${name} maxLength="50" onInput=${(e) => setName(e.currentTarget.value)} /></label>
    <label>Bio <textarea rows="2" value=${bio} onInput=${(e) => setBio(e.currentTarget.value)}></textarea></label>
    <${ErrorNote} error=${error} />
    <div class="row"><button type="submit" class="primary">Save</button> <button type="button" onClick=${() => onDone(null)}>Cancel</button></div>
  </form>`;
}
