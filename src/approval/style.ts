/**
 * The one stylesheet of the approval pages, served from 'self' (the CSP allows style-src 'self'
 * and nothing else: no inline style, no script, no image, no font). Plain and calm: system
 * fonts, one column on a phone, evidence beside the forms on a laptop, visible focus.
 */
import { createHash } from "node:crypto"

export const STYLESHEET = `
:root {
  --ink: #1d2428; --muted: #5b666d; --line: #d9dee1; --bg: #f7f8f8; --card: #fff;
  --accent: #1f5f8b; --accent-ink: #fff; --mark: #fff1a8;
  --proposed: #8a5a00; --proposed-bg: #fff4dc; --confirmed: #1d6b3a; --confirmed-bg: #e3f4e8;
  --superseded: #555f66; --superseded-bg: #eceff1; --rejected: #a12a22; --rejected-bg: #fbe6e4;
  --ok-bg: #e3f4e8; --warn-bg: #fff4dc; --err-bg: #fbe6e4;
  color-scheme: light;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; background: var(--bg); color: var(--ink);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, textarea:focus-visible, select:focus-visible, summary:focus-visible {
  outline: 3px solid var(--accent); outline-offset: 2px;
}
.skip { position: absolute; left: -999px; top: 0; background: var(--card); padding: .5rem 1rem; }
.skip:focus { left: 1rem; z-index: 10; }
header.top {
  display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: center; justify-content: space-between;
  padding: .75rem 1rem; background: var(--card); border-bottom: 1px solid var(--line);
}
header.top .brand { font-weight: 600; color: var(--ink); text-decoration: none; }
header.top nav { display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: center; color: var(--muted); font-size: .95rem; }
header.top form { display: inline; margin: 0; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; line-height: 1.3; margin: .5rem 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 1.75rem 0 .75rem; }
h3 { font-size: 1.05rem; margin: 1.25rem 0 .5rem; }
p, ul, ol, dl { margin: .5rem 0; }
.muted, time { color: var(--muted); }
.small { font-size: .9rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 1rem; margin: 0 0 1rem; }
.list { list-style: none; padding: 0; margin: 0; }
.list > li { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; margin: 0 0 .6rem; }
.list .statement { font-weight: 600; overflow-wrap: anywhere; }
.list .statement a { color: var(--ink); text-decoration: none; }
.list .statement a:hover, .list .statement a:focus-visible { text-decoration: underline; }
.meta { display: flex; flex-wrap: wrap; gap: .15rem 1rem; color: var(--muted); font-size: .9rem; margin-top: .25rem; }
blockquote {
  margin: .5rem 0; padding: .25rem .75rem; border-left: 3px solid var(--line); color: var(--ink);
  overflow-wrap: anywhere; white-space: pre-wrap;
}
.badge {
  display: inline-block; padding: .05rem .5rem; border-radius: 999px; font-size: .8rem; font-weight: 600;
  letter-spacing: .02em; vertical-align: .1em; border: 1px solid transparent;
}
.badge.proposed { color: var(--proposed); background: var(--proposed-bg); border-color: #e8cf98; }
.badge.confirmed, .badge.active { color: var(--confirmed); background: var(--confirmed-bg); border-color: #a9d8b8; }
.badge.superseded, .badge.archived { color: var(--superseded); background: var(--superseded-bg); border-color: #cfd6da; }
.badge.rejected { color: var(--rejected); background: var(--rejected-bg); border-color: #eab5b0; }
.badge.unconfirmed { color: var(--proposed); background: var(--proposed-bg); border-color: #e8cf98; }
.badge.auto { color: #5a3d8a; background: #efe8fa; border-color: #cdbbe8; }
.badge.exception { color: var(--rejected); background: var(--rejected-bg); border-color: #eab5b0; font-weight: 500; }
.reasons ul { margin: .25rem 0 0; padding-left: 1.25rem; color: var(--muted); }
.reasons p { margin: .25rem 0 0; }
.notice { border-radius: 6px; padding: .75rem 1rem; margin: 0 0 1rem; border: 1px solid var(--line); }
.notice.ok { background: var(--ok-bg); border-color: #a9d8b8; }
.notice.warn { background: var(--warn-bg); border-color: #e8cf98; }
.notice.error { background: var(--err-bg); border-color: #eab5b0; }
.notice h2 { margin: 0 0 .25rem; font-size: 1.05rem; }
.window { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .5rem .75rem; max-height: 28rem; overflow: auto; }
.window p { margin: .25rem 0; overflow-wrap: anywhere; }
.window .ts { color: var(--muted); font-variant-numeric: tabular-nums; margin-right: .4rem; }
.window .speaker { font-weight: 600; margin-right: .3rem; }
.mailtext { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; font: inherit; }
pre.command { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .6rem .75rem; white-space: pre-wrap; overflow-wrap: anywhere; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9rem; }
mark { background: var(--mark); color: inherit; padding: 0 .1rem; border-radius: 2px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
th, td { text-align: left; vertical-align: top; padding: .35rem .5rem; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
th { color: var(--muted); font-weight: 600; }
.changed { background: var(--mark); }
form.decide { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 1rem; margin: 0 0 1rem; }
form.decide h3 { margin-top: 0; }
label { display: block; margin: .6rem 0 .2rem; font-weight: 600; font-size: .95rem; }
label .hint { font-weight: 400; color: var(--muted); }
input[type=text], input[type=date], input[type=password], textarea, select {
  width: 100%; padding: .45rem .55rem; border: 1px solid #aeb7bc; border-radius: 4px; font: inherit; background: #fff; color: var(--ink);
}
textarea { min-height: 4.5rem; resize: vertical; }
.relations .label { display: block; margin: .6rem 0 .2rem; font-weight: 600; font-size: .95rem; }
.relations .label .hint { font-weight: 400; color: var(--muted); }
.relrow { display: grid; grid-template-columns: 9.5rem minmax(0, 1fr); gap: .4rem; margin: 0 0 .4rem; }
.details { color: var(--muted); font-size: .8rem; margin: .25rem 0 0; overflow-wrap: anywhere; }
td .details { margin-top: .1rem; }
.list > li.dup { border-left: 4px solid var(--proposed); }
.dupnote, .conflictnote { margin: .25rem 0; }
.list > li.conflict { border-left: 4px solid var(--rejected); }
.side { display: grid; grid-template-columns: minmax(0, 1fr); gap: .75rem; margin: 0 0 1rem; }
.side > div { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; }
.side > div h3 { margin-top: 0; }
.side .statement { font-weight: 600; overflow-wrap: anywhere; }
.side .new { border-left: 4px solid var(--proposed); }
.side .old { border-left: 4px solid var(--confirmed); }
dl.explain { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .5rem .75rem; }
dl.explain dt { color: var(--ink); font-weight: 600; }
textarea.json { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9rem; }
button {
  font: inherit; padding: .5rem 1rem; border-radius: 4px; border: 1px solid var(--accent);
  background: var(--accent); color: var(--accent-ink); cursor: pointer; margin-top: .75rem; min-height: 2.5rem;
}
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: #fff; color: var(--rejected); border-color: var(--rejected); }
button.link { background: none; border: none; color: var(--accent); padding: 0; margin: 0; min-height: 0; text-decoration: underline; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: flex-end; margin-top: .5rem; }
.actions form.decide, .list form.decide { flex: 1 1 16rem; border: 0; padding: 0; margin: 0; background: none; }
.list details form.decide { margin-top: .25rem; }
.actions.conflict-actions { align-items: stretch; }
.actions.conflict-actions form.decide { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; }
.actions.conflict-actions form.decide h3 { margin-top: 0; }
details { margin: .5rem 0; }
summary { cursor: pointer; color: var(--accent); }
.counts { display: flex; flex-wrap: wrap; gap: .25rem 1rem; color: var(--muted); }
.path { color: var(--muted); }
.path b { color: var(--ink); font-weight: 600; }
.grid { display: block; }
label.pick { display: inline-flex; align-items: center; gap: .4rem; margin: 0 0 .35rem; font-weight: 400; color: var(--muted); cursor: pointer; }
label.pick input { width: 1.25rem; height: 1.25rem; margin: 0; }
fieldset.bulk-actions { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; margin: .5rem 0 1rem; }
fieldset.bulk-actions legend { font-weight: 600; padding: 0 .25rem; }
fieldset.bulk-actions .buttons { display: flex; flex-wrap: wrap; gap: .5rem 1rem; }
.list > li.refused { border: 2px solid var(--rejected); }
.refused-note { margin: 0 0 .35rem; color: var(--rejected); }
@media (min-width: 62rem) {
  .grid { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 1.5rem; align-items: start; }
  .side { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); }
}
@media (max-width: 40rem) {
  main { padding: .75rem; }
  h1 { font-size: 1.3rem; }
  dl.facts { grid-template-columns: 1fr; }
  dl.facts dt { margin-top: .35rem; }
  .versions th:nth-child(n+4), .versions td:nth-child(n+4) { display: none; }
}
`

/** The stylesheet's URL carries its hash, so a changed sheet is never served from a stale cache. */
export const STYLESHEET_PATH = "/approval/style.css"
export const STYLESHEET_HREF = `${STYLESHEET_PATH}?v=${createHash("sha256").update(STYLESHEET).digest("hex").slice(0, 12)}`
