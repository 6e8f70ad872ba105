// Discover: set my location (the browser's geolocation or typed coordinates), then cards of
// people nearby, nearest first, to swipe left or right; a match opens the conversation.
//
// The server hands each person out once ("shown" = in a Discover answer, docs/discover.md), so
// the deck keeps every card it was handed until it is swiped: in localStorage per user, across
// a Refresh, a radius change, leaving the page or reloading it.
import { useEffect, useRef, useState } from "preact/hooks";
import { html, useApp, ErrorNote, Avatar, Icon, go, plural } from "./ui.js";


export function DiscoverPage() {
  const { api, me, toast } = useApp();
  const LOCATION_KEY = `warble.location.${me.id}`; // the last one set from this browser
  const saved = JSON.parse(localStorage.getItem(LOCATION_KEY) || "null");
  const [located, setLocated] = useState(saved);
  const [lat, setLat] = useState(saved ? String(saved.lat) : "");
  const [lon, setLon] = useState(saved ? String(saved.lon) : "");
  const [radius, setRadius] = useState("10");
  const DECK_KEY = `warble.deck.${me.id}`;
  const [deck, setDeckState] = useState(() => JSON.parse(localStorage.getItem(DECK_KEY) || "[]"));
  const setDeck = (update) => setDeckState((was) => {
    const next = update(was);
    localStorage.setItem(DECK_KEY, JSON.stringify(next));
    return next;
  });
  // What this radius covers of the deck; a card measured from an earlier location (null) stays.
  const cards = deck.filter((c) => c.distance_km === null || c.distance_km <= Number(radius));
  const cardFocused = useRef(false); // a keyboard swipe moves focus on to the next card
  const [state, setState] = useState("idle"); // idle | loading | ready
  const [error, setError] = useState(null);
  const [editing, setEditing] = useState(!saved);

  async function load(km = radius) {
    setState((was) => (was === "ready" && cards.length === 0 ? was : "loading"));
    setError(null);
    try {
      const page = await api.discover(Number(km) || 10);
      setDeck((kept) => keep(kept, page.items));
      setState("ready");
    } catch (e) {
      if (e.code === "location_required") setEditing(true);
      setError(e);
      setState("idle");
    }
  }

  useEffect(() => { if (located) load(); }, []);

  // "Nobody new nearby" does not last: the server looks afresh 15 s after a feed ran dry
  // (docs/discover.md), so the empty deck asks again as often while it is shown.
  const dry = located && !editing && state === "ready" && cards.length === 0;
  useEffect(() => {
    if (!dry) return undefined;
    const timer = setInterval(() => { if (!document.hidden) load(); }, DRY_RETRY_MS);
    return () => clearInterval(timer);
  }, [dry, radius]);

  async function place(latitude, longitude) {
    setError(null);
    try {
      await api.setLocation(latitude, longitude);
      const spot = { lat: latitude, lon: longitude };
      localStorage.setItem(LOCATION_KEY, JSON.stringify(spot));
      // The kept cards' distances were measured from where I was: no longer told.
      if (!located || located.lat !== latitude || located.lon !== longitude) {
        setDeck((kept) => kept.map((c) => ({ ...c, distance_km: null })));
      }
      setLocated(spot);
      setLat(String(latitude));
      setLon(String(longitude));
      setEditing(false);
      await load();
    } catch (e) {
      setError(e);
    }
  }

  function useBrowserLocation() {
    if (!navigator.geolocation) {
      setError(new Error("This browser cannot tell your location: type your coordinates."));
      return;
    }
    navigator.geolocation.getCurrentPosition(
      (p) => place(round(p.coords.latitude), round(p.coords.longitude)),
      (e) => setError(new Error(`Your location is not available (${e.message}): type your coordinates.`)),
      { timeout: 10_000 },
    );
  }

  async function swipe(card, direction) {
    cardFocused.current = !!document.activeElement?.closest(".swipe-card");
    setDeck((kept) => kept.filter((c) => c.id !== card.id));
    try {
      const answer = await api.swipe(card.id, direction);
      if (answer.matched) window.dispatchEvent(new CustomEvent("warble:match", { detail: { user: card, conversation_id: answer.conversation_id } }));
    } catch (e) {
      // Not recorded (no answer, or the server failed): the card comes back to be swiped again.
      if (!e.status || e.status >= 500) setDeck((kept) => keep(kept, [card]));
      toast(e);
    }
  }

  const [top, ...rest] = cards;
  return html`<section class="page discover">
    <h1>Discover</h1>
    ${editing || !located ? html`<form class="card form location" noValidate onSubmit=${(e) => {
        e.preventDefault();
        const spot = coordinates(lat, lon);
        if (spot.error) setError(spot.error);
        else place(spot.lat, spot.lon);
      }}>
        <p>Set your location to see people nearby.</p>
        <button type="button" class="primary" onClick=${useBrowserLocation}><${Icon} name="pin" size=${16} /> Use my location</button>
        <div class="or">or type coordinates</div>
        <div class="row">
          <label>Latitude <input name="lat" inputmode="decimal" value=${lat} onInput=${(e) => setLat(e.currentTarget.value)} /></label>
          <label>Longitude <input name="lon" inputmode="decimal" value=${lon} onInput=${(e) => setLon(e.currentTarget.value)} /></label>
        </div>
        <button type="submit">Set location</button>
      </form>`
    : html`<div class="toolbar">
        <span class="where"><${Icon} name="pin" size=${16} /> ${located.lat.toFixed(3)}, ${located.lon.toFixed(3)}</span>
        <label>within <select value=${radius} aria-label="Radius" onChange=${(e) => { setRadius(e.currentTarget.value); load(e.currentTarget.value); }}>
          ${["1", "10", "50", "200", "500"].map((r) => html`<option value=${r}>${r} km</option>`)}</select></label>
        <button onClick=${() => load()}>Refresh</button>
        <button onClick=${() => setEditing(true)}>Move</button>
      </div>`}
    <${ErrorNote} error=${error} />
    ${located && !editing && html`<div class="deck">
      ${state === "loading" && !top && html`<p class="empty">Looking around…</p>`}
      ${state === "ready" && !top && html`<p class="empty">Nobody new nearby. Try a wider radius, or come back later.</p>`}
      ${rest.slice(0, 2).reverse().map((c, i) => html`<div key=${c.id} class=${"card-shadow depth-" + (rest.slice(0, 2).length - i)}></div>`)}
      ${top && html`<${SwipeCard} key=${top.id} card=${top} onSwipe=${swipe} focus=${cardFocused.current} />`}
    </div>`}
  </section>`;
}

// The arrow keys swipe only while the card (or one of its buttons) has focus: never from the
// radius menu, another field, or under the match dialog.
function SwipeCard({ card, onSwipe, focus }) {
  const ref = useRef(null);
  const start = useRef(null);
  const [dx, setDx] = useState(0);

  useEffect(() => { if (focus) ref.current.focus(); }, []);
  const onKey = (e) => {
    if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
    e.preventDefault();
    onSwipe(card, e.key === "ArrowRight" ? "right" : "left");
  };

  const down = (e) => {
    if (e.target.closest("button")) return; // the buttons swipe by click
    start.current = e.clientX;
    ref.current.setPointerCapture(e.pointerId);
  };
  const move = (e) => { if (start.current !== null) setDx(e.clientX - start.current); };
  const up = () => {
    if (start.current === null) return;
    start.current = null;
    if (Math.abs(dx) > 100) onSwipe(card, dx > 0 ? "right" : "left");
    else setDx(0);
  };

  const style = `transform: translateX(${dx}px) rotate(${dx / 20}deg)`;
  const name = card.display_name || card.username;
  return html`<div class="swipe-card" ref=${ref} style=${style} onPointerDown=${down} onPointerMove=${move} onPointerUp=${up} onPointerCancel=${up}
      onKeyDown=${onKey} tabIndex="0" role="group" aria-keyshortcuts="ArrowLeft ArrowRight"
      aria-label=${`${name}: the left arrow key passes, the right arrow key likes`} data-user=${card.username}>
    ${dx > 40 && html`<span class="stamp like">LIKE</span>`}
    ${dx < -40 && html`<span class="stamp nope">NOPE</span>`}
    <${Avatar} user=${card} size=${120} />
    <h2>${card.display_name || card.username}</h2>
    <div class="handle">@${card.username}</div>
    <div class="distance" data-testid="distance">${card.distance_km === null ? "Near where you were" : `${formatKm(card.distance_km)} away`}</div>
    ${card.bio && html`<p class="bio">${card.bio}</p>`}
    <div class="counts small"><span><b>${card.followers_count}</b> ${plural(card.followers_count, "follower")}</span> <span><b>${card.tweet_count}</b> ${plural(card.tweet_count, "tweet")}</span></div>
    <div class="swipe-buttons">
      <button class="nope" title="Pass (←)" onClick=${() => onSwipe(card, "left")} aria-label="Swipe left"><${Icon} name="x" size=${30} /></button>
      <button class="like" title="Like (→)" onClick=${() => onSwipe(card, "right")} aria-label="Swipe right"><${Icon} name="heart" size=${30} filled=${true} /></button>
    </div>
  </div>`;
}

// The moment of a match, for the swiper (from the answer) and the other one (the pushed event):
// a modal <dialog> (the page behind is inert, focus moves in, Escape closes it), whose Tab and
// Shift+Tab go round its own buttons.
export function MatchModal({ match, onClose }) {
  if (!match) return null;
  return html`<${MatchDialog} key=${match.conversation_id} match=${match} onClose=${onClose} />`;
}

function MatchDialog({ match, onClose }) {
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
  const open = () => { onClose(); go("messages/" + match.conversation_id); };
  const roundTab = (e) => {
    if (e.key !== "Tab") return;
    const stops = [...dialog.current.querySelectorAll("button")];
    const at = stops.indexOf(document.activeElement);
    const next = e.shiftKey ? (at <= 0 ? stops.length - 1 : at - 1) : (at + 1) % stops.length;
    e.preventDefault();
    stops[next].focus();
  };
  return html`<dialog ref=${dialog} class="modal match" aria-labelledby="match-title" onClose=${onClose} onKeyDown=${roundTab}
      onClick=${(e) => e.target === dialog.current && onClose()}>
    <h2 id="match-title">It's a match!</h2>
    <${Avatar} user=${match.user} size=${96} />
    <p>You and <b>${match.user.display_name || match.user.username}</b> liked each other.</p>
    <div class="row"><button class="primary" onClick=${open} autofocus>Send a message</button> <button onClick=${onClose}>Keep swiping</button></div>
  </dialog>`;
}

const DRY_RETRY_MS = 15_000;

// The kept deck with a Discover page's cards added (a card offered again replaces its copy),
// nearest first; cards whose distance is no longer known last.
function keep(kept, items) {
  const byId = new Map(kept.map((c) => [c.id, c]));
  for (const c of items) byId.set(c.id, c);
  const far = (c) => (c.distance_km === null ? Infinity : c.distance_km);
  return [...byId.values()].sort((a, b) => far(a) - far(b));
}

// Typed coordinates, or the error to show: an empty field is not 0 (Number("") is).
function coordinates(lat, lon) {
  const read = (text, bound) => {
    const t = text.trim().replace(",", ".");
    const x = /^[-+]?(\d+\.?\d*|\.\d+)$/.test(t) ? Number(t) : NaN;
    return Math.abs(x) <= bound ? x : null;
  };
  const la = read(lat, 90);
  const lo = read(lon, 180);
  if (la === null || lo === null) {
    return { error: { text: "Type a latitude between -90 and 90 and a longitude between -180 and 180, for example 48.8566 and 2.3522." } };
  }
  return { lat: la, lon: lo };
}

const round = (x) => Math.round(x * 1e5) / 1e5;
// Whole kilometres, at least 1 (API.md: nobody is placed closer than about a kilometre).
const formatKm = (km) => `${km} km`;
