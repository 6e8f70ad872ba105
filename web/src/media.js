// Images: attaching up to four to a tweet (file picker or paste), each uploaded straight to the
// store with the form the API gives (API.md "Media (images)"), with its progress, its alt text and
// what went wrong; a tweet's images as thumbnails, and one at full size in a dialog.
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "./ui.js";

export const MAX_IMAGES = 4;
export const IMAGE_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"];
const MAX_BYTES = 5 * 1024 * 1024;
const SETTLE_MS = 30_000; // the API says 10 s; a slow machine gets more before we give up

// The file itself goes to upload.url as S3's browser POST: every field, then the file.
function sendFile(upload, file, onProgress) {
  return new Promise((resolve, reject) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(upload.fields)) form.append(name, value);
    form.append("file", file);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", upload.url);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => (xhr.status < 300 ? resolve() : reject(new Error(storeMessage(xhr))));
    xhr.onerror = () => reject(new Error("The upload did not reach the store. Try again."));
    xhr.send(form);
  });
}

function storeMessage(xhr) {
  const found = /<Message>([^<]*)<\/Message>/.exec(xhr.responseText || "");
  return `The store refused the file (${xhr.status})${found ? ": " + found[1] : ""}.`;
}

async function settled(api, id) {
  const started = Date.now();
  for (;;) {
    const media = await api.media(id);
    if (media.status !== "pending") return media;
    if (Date.now() - started > SETTLE_MS) throw new Error("The image is taking too long to process.");
    await new Promise((r) => setTimeout(r, 500));
  }
}

// The images of one compose box: add (picker, paste), remove, alt text, and their media ids once
// every one is ready.
export function useAttachments(api) {
  const [items, setItems] = useState([]);
  const [note, setNote] = useState(null); // images left out past the fourth, said, not dropped silently
  const seq = useRef(0);
  const update = (key, fields) => setItems((all) => all.map((a) => (a.key === key ? { ...a, ...fields } : a)));

  async function upload(item) {
    try {
      const started = await api.createMedia(item.file.type, item.file.size, "");
      update(item.key, { id: started.media.id, state: "uploading" });
      await sendFile(started.upload, item.file, (progress) => update(item.key, { progress }));
      update(item.key, { progress: 1, state: "processing" });
      const media = await settled(api, started.media.id);
      update(item.key, media.status === "ready"
        ? { state: "ready", media }
        : { state: "failed", error: (media.error && media.error.message) || "The image could not be used." });
    } catch (e) {
      update(item.key, { state: "failed", error: e.text || e.message });
    }
  }

  function add(files) {
    const images = [...files].filter((f) => f.type.startsWith("image/"));
    const room = MAX_IMAGES - items.length;
    const added = images.slice(0, Math.max(0, room)).map((file) => {
      const key = ++seq.current;
      const bad = !IMAGE_TYPES.includes(file.type)
        ? "Only JPEG, PNG, GIF and WebP images can be attached."
        : file.size > MAX_BYTES ? "Images can be at most 5 MB." : null;
      return { key, file, local: URL.createObjectURL(file), alt: "", progress: 0,
               state: bad ? "failed" : "starting", error: bad };
    });
    setItems((all) => [...all, ...added]);
    added.filter((a) => a.state === "starting").forEach(upload);
    const out = images.length - added.length;
    setNote(out > 0 ? `A tweet holds up to ${MAX_IMAGES} images: ${out} ${out === 1 ? "was" : "were"} left out.` : null);
    return out > 0;
  }

  function remove(key) {
    setNote(null);
    setItems((all) => {
      const gone = all.find((a) => a.key === key);
      if (gone) URL.revokeObjectURL(gone.local);
      return all.filter((a) => a.key !== key);
    });
  }

  const setAlt = (key, alt) => update(key, { alt });
  const clear = () => { items.forEach((a) => URL.revokeObjectURL(a.local)); setItems([]); setNote(null); };
  const ready = items.length > 0 && items.every((a) => a.state === "ready");
  const busy = items.some((a) => a.state !== "ready" && a.state !== "failed");

  // Alt text typed while the image was uploading is saved before the tweet that shows it.
  async function mediaIds() {
    for (const a of items) {
      if (a.alt !== a.media.alt_text) await api.setAltText(a.media.id, a.alt);
    }
    return items.map((a) => a.media.id);
  }

  return { items, note, add, remove, setAlt, clear, ready, busy, mediaIds };
}

// The compose box's images: thumbnail, progress, alt text, the reason one failed.
export function AttachmentTray({ attachments }) {
  if (!attachments.items.length) return null;
  return html`${attachments.note && html`<p class="hint" role="status" data-testid="left-out">${attachments.note}</p>`}
  <ul class="attachments" aria-label="Attached images">
    ${attachments.items.map((a) => html`<li key=${a.key} class=${"attachment " + a.state} data-state=${a.state}>
      <img src=${a.local} alt="" />
      ${(a.state === "uploading" || a.state === "starting") && html`<progress max="1" value=${a.progress} aria-label="Upload progress"></progress>`}
      ${a.state === "processing" && html`<span class="note">Processing…</span>`}
      ${a.state === "failed" && html`<p class="error" role="alert">${a.error}</p>`}
      ${a.state !== "failed" && html`<input class="alt" type="text" maxlength="1500" placeholder="Describe this image"
        aria-label="Image description" value=${a.alt} onInput=${(e) => attachments.setAlt(a.key, e.currentTarget.value)} />`}
      <button type="button" class="remove" aria-label="Remove image" onClick=${() => attachments.remove(a.key)}>×</button>
    </li>`)}
  </ul>`;
}

// The picker button; paste is handled by the compose box (onPaste below).
export function AddImages({ attachments }) {
  const input = useRef(null);
  const full = attachments.items.length >= MAX_IMAGES;
  return html`<label class=${"add-images" + (full ? " disabled" : "")} title="Add images">
    <input ref=${input} type="file" accept=${IMAGE_TYPES.join(",")} multiple disabled=${full} aria-label="Add images"
      onChange=${(e) => { attachments.add(e.currentTarget.files); e.currentTarget.value = ""; }} />
    <svg width="20" height="20" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="1.8"
      stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">
      <rect x="3" y="4" width="18" height="16" rx="2" /><circle cx="9" cy="10" r="2" /><path d="M21 17l-5-5-9 8" /></svg>
  </label>`;
}

export function pastedImages(event, attachments) {
  const files = [...((event.clipboardData && event.clipboardData.files) || [])];
  if (files.some((f) => f.type.startsWith("image/"))) {
    event.preventDefault();
    attachments.add(files);
  }
}

// BlurHash's average colour (its DC component): the box's colour while the preview loads.
const B83 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~";
export function blurhashColour(hash) {
  if (!hash || hash.length < 6) return "#e7e9ea";
  let value = 0;
  for (const c of hash.slice(2, 6)) value = value * 83 + B83.indexOf(c);
  return `#${value.toString(16).padStart(6, "0")}`;
}

// A tweet's images: previews in a grid; one opens at full size.
export function MediaGrid({ media }) {
  const [open, setOpen] = useState(null);
  if (!media || !media.length) return null;
  return html`<div class=${"media-grid n" + media.length}>
    ${media.map((m, i) => {
      // A GIF plays from its original (the preview is its first frame, a still), is labelled
      // as one, and is never drawn past its own size.
      const gif = m.content_type === "image/gif";
      return html`<button type="button" key=${m.id} class=${"thumb" + (gif ? " gif" : "")} style=${"background:" + blurhashColour(m.blurhash)}
        aria-label=${(gif ? "View GIF" : "View image") + (m.alt_text ? ": " + m.alt_text : "")} onClick=${() => setOpen(i)}>
        <img src=${gif ? m.url : m.preview_url} alt=${m.alt_text} loading="lazy" width=${m.width} height=${m.height} />
        ${gif && html`<span class="media-label" aria-hidden="true">GIF</span>`}
      </button>`;
    })}
    ${open !== null && html`<${FullSize} media=${media[open]} onClose=${() => setOpen(null)} />`}
  </div>`;
}

function FullSize({ media, onClose }) {
  const dialog = useRef(null);
  useEffect(() => {
    const d = dialog.current;
    d.showModal();
    return () => d.open && d.close();
  }, []);
  return html`<dialog ref=${dialog} class="full-size" aria-label="Image" onClose=${onClose}
    onClick=${(e) => e.target === dialog.current && onClose()}>
    <img src=${media.url} alt=${media.alt_text} />
    ${media.alt_text && html`<p class="alt-text">${media.alt_text}</p>`}
    <button type="button" class="close" aria-label="Close" onClick=${onClose}>×</button>
  </dialog>`;
}
