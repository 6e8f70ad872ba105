// Tweets: compose with the 280 counter, a tweet with its actions, lists by cursor, the home
// timeline with its "N new posts" bar, and one tweet's page with its replies.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { html, useApp, usePaged, Sentinel, ErrorNote, Avatar, Icon, Time, RichText, userHref, tweetLength, go, back, fullTime } from "./ui.js";
import { useAttachments, AttachmentTray, AddImages, MediaGrid, pastedImages } from "./media.js";
import { ReportDialog } from "./moderation.js";

const LIMIT = 280;

export function Compose({ replyTo, onPosted, placeholder = "What's happening?", autofocus = false }) {
  const { api, me } = useApp();
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const attachments = useAttachments(api);
  const left = LIMIT - tweetLength(text);
  // With images the text may be empty; images still uploading or failed hold the post back.
  const blank = !text.trim() && !attachments.ready;
  const held = attachments.items.length > 0 && !attachments.ready;

  async function submit(event) {
    event.preventDefault();
    if (blank || held || left < 0 || busy) return;
    setBusy(true);
    setError(null);
    try {
      const mediaIds = attachments.items.length ? await attachments.mediaIds() : [];
      const tweet = await api.postTweet(text, replyTo, mediaIds);
      attachments.clear();
      setText("");
      onPosted && onPosted(tweet);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  return html`<form class="compose" onSubmit=${submit}>
    <${Avatar} user=${me} />
    <div class="compose-body">
      <textarea name="text" rows=${replyTo ? 2 : 3} placeholder=${placeholder} value=${text} autofocus=${autofocus}
        onInput=${(e) => setText(e.currentTarget.value)} onPaste=${(e) => pastedImages(e, attachments)}
        aria-label=${replyTo ? "Reply text" : "Tweet text"}></textarea>
      <${AttachmentTray} attachments=${attachments} />
      <${ErrorNote} error=${error} />
      <div class="compose-foot">
        <${AddImages} attachments=${attachments} />
        <span class=${"counter" + (left < 0 ? " over" : left <= 20 ? " near" : "")} data-testid="counter">${left}</span>
        <button type="submit" class="primary" disabled=${blank || held || left < 0 || busy}>${replyTo ? "Reply" : "Post"}</button>
      </div>
    </div>
  </form>`;
}

// One tweet. A retweet shows its original, with a line naming who retweeted. `onChange` gets the
// original as it now is: every copy of it on the page (the tweet, retweets of it) changes with it.
export function Tweet({ tweet, onChange, onRemove, showReplyTo = true, replyingTo = null, full = false }) {
  const { api, me, toast } = useApp();
  const shown = tweet.retweet_of || tweet;
  const [replying, setReplying] = useState(false);
  const [reporting, setReporting] = useState(false);
  const asked = useAuthorOf(showReplyTo && !replyingTo ? shown.reply_to : null);
  const parentAuthor = replyingTo ? replyingTo.author : asked;

  const patch = (fields) => onChange && onChange({ ...shown, ...fields });

  // Like or retweet: shown at once, undone if the API refuses. No count goes below zero.
  async function toggle(flag, count, call) {
    const on = !shown[flag];
    patch({ [flag]: on, [count]: Math.max(0, shown[count] + (on ? 1 : -1)) });
    try {
      await call(shown.id, on);
    } catch (e) {
      patch({ [flag]: !on, [count]: shown[count] });
      toast(e);
    }
  }
  const like = () => toggle("liked_by_me", "like_count", (id, on) => api.like(id, on));
  const retweet = () => toggle("retweeted_by_me", "retweet_count", (id, on) => api.retweet(id, on));

  async function remove() {
    if (!confirm("Delete this tweet?")) return;
    try {
      await api.deleteTweet(shown.id);
      onRemove && onRemove(tweet);
    } catch (e) {
      toast(e);
    }
  }

  const mine = me && shown.author.id === me.id;
  const who = shown.author.display_name || shown.author.username;
  const whose = mine ? "your" : `${who}'s`;
  // Each button says which tweet it acts on: a page holds many Reply buttons.
  const about = snippet(shown.text) || "images";
  const count = (n) => (n > 0 ? n : "");
  // A button's name holds the count it shows (axe-core: the visible text is part of the name).
  // (Not in brackets: axe-core leaves bracketed words out of the name it compares.)
  const counted = (n, one, many) => (n > 0 ? `, ${n} ${n === 1 ? one : many}` : "");
  return html`<article class="tweet" data-tweet-id=${shown.id}>
    ${tweet.retweet_of && html`<div class="retweeted-by"><${Icon} name="retweet" size=${14} /> <a href=${userHref(tweet.author)}>${tweet.author.id === (me && me.id) ? "You" : tweet.author.display_name || tweet.author.username}</a> retweeted</div>`}
    <div class="tweet-row">
      <a href=${userHref(shown.author)} aria-label=${"@" + shown.author.username} tabindex="-1"><${Avatar} user=${shown.author} /></a>
      <div class="tweet-body">
        <header>
          <a class="name" href=${userHref(shown.author)}>${who}</a>${" "}
          <span class="handle">@${shown.author.username}</span>${" · "}
          <a class="when" href=${"#/tweet/" + shown.id}><${Time} iso=${shown.created_at} /></a>
        </header>
        ${showReplyTo && shown.reply_to && html`<div class="reply-to"><a href=${"#/tweet/" + shown.reply_to}>${parentAuthor ? `Replying to @${parentAuthor.username}` : "Replying to a tweet"}</a></div>`}
        ${shown.text && html`<p class="tweet-text"><${RichText} text=${shown.text} tags=${shown.hashtags} /></p>`}
        <${MediaGrid} media=${shown.media} />
        ${full && html`<p class="full-time"><time datetime=${shown.created_at}>${fullTime(shown.created_at)}</time></p>`}
        <footer class="actions">
          <button class="act reply" title="Reply" aria-label=${`Reply to ${who}: ${about}${counted(shown.reply_count, "reply", "replies")}`} onClick=${() => setReplying(!replying)}><${Icon} name="reply" size=${18} /> <span>${count(shown.reply_count)}</span></button>
          <button class=${"act retweet" + (shown.retweeted_by_me ? " on" : "")} title=${shown.retweeted_by_me ? "Undo retweet" : "Retweet"} aria-label=${(shown.retweeted_by_me ? `Undo retweet of ${whose} tweet: ${about}` : `Retweet ${whose} tweet: ${about}`) + counted(shown.retweet_count, "retweet", "retweets")}
            aria-pressed=${shown.retweeted_by_me} onClick=${retweet}><${Icon} name="retweet" size=${18} /> <span>${count(shown.retweet_count)}</span></button>
          <button class=${"act like" + (shown.liked_by_me ? " on" : "")} title=${shown.liked_by_me ? "Unlike" : "Like"} aria-label=${(shown.liked_by_me ? `Unlike ${whose} tweet: ${about}` : `Like ${whose} tweet: ${about}`) + counted(shown.like_count, "like", "likes")}
            aria-pressed=${shown.liked_by_me} onClick=${like}><${Icon} name="heart" size=${18} filled=${shown.liked_by_me} /> <span>${count(shown.like_count)}</span></button>
          ${mine && html`<button class="act delete" title="Delete" aria-label=${`Delete your tweet: ${about}`} onClick=${remove}><${Icon} name="trash" size=${18} /></button>`}
          ${me && !mine && html`<button class="act report" title="Report" aria-label=${`Report ${whose} tweet: ${about}`} onClick=${() => setReporting(true)}><${Icon} name="flag" size=${18} /></button>`}
        </footer>
        ${reporting && html`<${ReportDialog} target=${{ type: "tweet", id: shown.id, what: `${whose} tweet` }} onClose=${() => setReporting(false)} />`}
        ${replying && html`<${Compose} replyTo=${shown.id} placeholder=${"Reply to @" + shown.author.username} autofocus=${true}
          onPosted=${() => { setReplying(false); patch({ reply_count: shown.reply_count + 1 }); toast("Your reply was posted."); }} />`}
      </div>
    </div>
  </article>`;
}

// Whom a reply answers: a Tweet names its parent by id only (API.md), so the author comes from
// the tweets this tab has already shown (a list remembers its own before drawing them), or from
// one request per parent otherwise. A parent that cannot be read (deleted, blocked) stays
// "a tweet".
const authors = new Map(); // tweet id -> UserSummary
const asking = new Map(); // tweet id -> Promise of its author or null

export function remember(tweet) {
  if (!tweet) return;
  authors.set(tweet.id, tweet.author);
  if (tweet.retweet_of) authors.set(tweet.retweet_of.id, tweet.retweet_of.author);
}

function useAuthorOf(id) {
  const { api } = useApp();
  const [author, setAuthor] = useState(() => (id && authors.get(id)) || null);
  useEffect(() => {
    if (!id) return undefined;
    if (authors.has(id)) {
      setAuthor(authors.get(id));
      return undefined;
    }
    if (!asking.has(id)) {
      asking.set(id, api.tweet(id).then((t) => { remember(t); return t.author; }, () => null));
    }
    let gone = false;
    asking.get(id).then((found) => { if (!gone) setAuthor(found); });
    return () => { gone = true; };
  }, [id]);
  return author;
}

const snippet = (text) => {
  const chars = [...(text || "").replace(/\s+/g, " ").trim()];
  return chars.length > 40 ? chars.slice(0, 40).join("") + "…" : chars.join("");
};

// Every copy of `original` in a list of tweets as it now is: the tweet itself and the retweets
// embedding it; my own retweet of it leaves once I undo it.
export function withOriginal(items, original, me) {
  return items.flatMap((t) => {
    if (t.id === original.id) return [{ ...t, ...original }];
    if (t.retweet_of && t.retweet_of.id === original.id) {
      if (!original.retweeted_by_me && me && t.author.id === me.id) return [];
      return [{ ...t, retweet_of: original }];
    }
    return [t];
  });
}

// The same tweet once, as Twitter shows it: an original and a retweet of it (or two friends'
// retweets) in one list keep only the newest entry, which is the first (lists run newest first);
// a retweet kept says who retweeted above it.
export function collapsed(items) {
  const seen = new Set();
  return items.filter((t) => {
    const id = (t.retweet_of || t).id;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

// A list of tweets by cursor, with infinite scroll.
export function TweetList({ paged, empty = "Nothing here yet.", onRemoved }) {
  const { me } = useApp();
  const replace = (original) => paged.update((items) => withOriginal(items, original, me));
  const remove = (gone) => {
    paged.update((items) => items.filter((t) => t.id !== gone.id && !(t.retweet_of && t.retweet_of.id === gone.id)));
    onRemoved && onRemoved(gone);
  };
  paged.items.forEach(remember);
  return html`<div class="tweets">
    ${collapsed(paged.items).map((t) => html`<${Tweet} key=${t.id} tweet=${t} onChange=${replace} onRemove=${remove} />`)}
    <${ErrorNote} error=${paged.error} />
    ${!paged.loading && !paged.error && paged.items.length === 0 && html`<p class="empty">${empty}</p>`}
    <${Sentinel} onVisible=${paged.more} done=${paged.done} loading=${paged.loading} />
  </div>`;
}

export function HomeTimeline() {
  const { api, counts, markRead } = useApp();
  const fetchPage = useCallback((cursor) => api.home(cursor), [api]);
  const paged = usePaged(fetchPage, "home");
  const newPosts = counts.home || 0;
  const [loadingNew, setLoadingNew] = useState(false);

  // Everything up to this page load has been seen: the bar counts from here.
  useEffect(() => { markRead(["home"]); }, []);

  async function showNew() {
    setLoadingNew(true);
    const before = new Set(paged.items.map((t) => t.id));
    await markRead(["home"]);
    // The count and the fan-out are both derived: retry briefly until the new posts arrive.
    for (let i = 0; i < 5; i++) {
      const page = await api.home(null).catch(() => null);
      if (page && page.items.some((t) => !before.has(t.id))) break;
      await new Promise((r) => setTimeout(r, 700));
    }
    paged.reload();
    setLoadingNew(false);
    scrollTo({ top: 0, behavior: "smooth" });
  }

  const posted = (tweet) => paged.update((items) => [tweet, ...items.filter((t) => t.id !== tweet.id)]);
  return html`<section class="page">
    <h1>Home</h1>
    <${Compose} onPosted=${posted} />
    ${newPosts > 0 && html`<button class="new-posts" onClick=${showNew} disabled=${loadingNew}>
      ${loadingNew ? "Loading…" : `Show ${newPosts} new post${newPosts === 1 ? "" : "s"}`}</button>`}
    <${TweetList} paged=${paged} empty="Your timeline is empty: follow people to see their tweets here." />
  </section>`;
}

const TWEET_ID = /^[1-9][0-9]{0,18}$/;
const THREAD_ABOVE = 5; // ancestors shown above a reply

export function TweetPage({ id }) {
  const { api } = useApp();
  const [tweet, setTweet] = useState(null);
  const [thread, setThread] = useState([]); // the tweets it replies to, oldest first
  const [error, setError] = useState(null);
  const valid = TWEET_ID.test(id || "");
  const fetchPage = useCallback((cursor) => api.replies(id, cursor), [api, id]);
  const paged = usePaged(valid ? fetchPage : NO_PAGE, id);

  useEffect(() => {
    setTweet(null);
    setThread([]);
    setError(valid ? null : { text: "No such tweet." });
    if (!valid) return;
    let gone = false;
    api.tweet(id).then(async (found) => {
      if (gone) return;
      remember(found);
      setTweet(found);
      const above = [];
      for (let parent = found.reply_to; parent && above.length < THREAD_ABOVE;) {
        const one = await api.tweet(parent).catch(() => null);
        if (!one || gone) break;
        above.unshift(one);
        parent = one.reply_to;
      }
      if (!gone) setThread(above);
    }, setError);
    return () => { gone = true; };
  }, [id]);

  const replied = (reply) => {
    paged.update((items) => [reply, ...items]);
    setTweet((t) => ({ ...t, reply_count: t.reply_count + 1 }));
  };
  const changed = (original) => setTweet((t) => (t.retweet_of ? { ...t, retweet_of: original } : original));
  const replyRemoved = () => setTweet((t) => t && { ...t, reply_count: Math.max(0, t.reply_count - 1) });
  const parent = thread[thread.length - 1];
  return html`<section class="page">
    <h1><button class="back" onClick=${back} title="Back" aria-label="Back"><${Icon} name="back" /></button> Tweet</h1>
    <${ErrorNote} error=${error} />
    ${thread.length > 0 && html`<div class="thread" aria-label="Earlier in the thread">
      ${thread.map((t) => html`<${Tweet} key=${t.id} tweet=${t} showReplyTo=${false} onChange=${(o) => setThread((ts) => withOriginal(ts, o, null))} />`)}</div>`}
    ${tweet && html`<${Tweet} tweet=${tweet} onChange=${changed} onRemove=${() => go("home")} replyingTo=${parent} full=${true} />`}
    ${tweet && html`<${Compose} replyTo=${tweet.id} placeholder="Post your reply" onPosted=${replied} />`}
    ${tweet && html`<h2 class="sub">Replies</h2>
      <${TweetList} paged=${paged} empty="No replies yet." onRemoved=${replyRemoved} />`}
  </section>`;
}

const NO_PAGE = async () => ({ items: [], next_cursor: null });
