/**
 * report.html: the same content as report.md, rendered for a browser. The content comes from one
 * place, renderMarkdown (markdown.ts); this file renders its blocks (headings, paragraphs, lists,
 * tables, images) as HTML, turns every table sortable, and puts each Phase 7 chart in as an
 * interactive vega-lite view of the same spec (tooltips, zoom and pan) instead of its PNG. vega,
 * vega-lite, vega-embed, kt's page script and styles are inlined: the file opens from disk with
 * no network.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import type {Report} from './types.js'
import {renderMarkdown} from './markdown.js'
import {studyCharts} from './study-charts.js'
import {vendorScriptPath, VENDOR_SCRIPTS, WEB_ASSETS_DIR, type VendorScript} from './vendor.js'

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'})[c]!)
}

/** Inline Markdown as renderMarkdown writes it: `code`, **bold**, [text](href), \| in tables. */
function inline(md: string): string {
  const out: string[] = []
  // code spans first: nothing inside them is Markdown
  const parts = md.split(/(`[^`]*`)/)
  for (const part of parts) {
    if (part.startsWith('`') && part.endsWith('`') && part.length >= 2) {
      out.push(`<code>${escapeHtml(part.slice(1, -1).replace(/\\\|/g, '|'))}</code>`)
      continue
    }
    let s = escapeHtml(part.replace(/\\\|/g, '|'))
    s = s.replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    s = s.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, text: string, href: string) => `<a href="${href}">${text}</a>`)
    out.push(s)
  }
  return out.join('')
}

/** Splits a Markdown table row into cells, keeping escaped pipes inside cells. */
function cells(row: string): string[] {
  const inner = row.trim().replace(/^\|/, '').replace(/\|$/, '')
  const out: string[] = []
  let cur = ''
  let code = false
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]
    if (c === '\\' && inner[i + 1] === '|') {
      cur += '\\|'
      i++
    } else if (c === '`') {
      code = !code
      cur += c
    } else if (c === '|' && !code) {
      out.push(cur.trim())
      cur = ''
    } else cur += c
  }
  out.push(cur.trim())
  return out
}

type Block =
  | {kind: 'heading'; level: number; text: string}
  | {kind: 'paragraph'; text: string}
  | {kind: 'list'; items: string[]}
  | {kind: 'table'; header: string[]; align: Array<'left' | 'right'>; rows: string[][]}
  | {kind: 'image'; alt: string; src: string}

/** The blocks of a Markdown document as renderMarkdown writes it (one construct per line group). */
function markdownBlocks(md: string): Block[] {
  const lines = md.split('\n')
  const blocks: Block[] = []
  let i = 0
  while (i < lines.length) {
    const line = lines[i]
    if (line.trim() === '') {
      i++
      continue
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line)
    const image = /^!\[([^\]]*)\]\(([^)]+)\)$/.exec(line.trim())
    if (heading) {
      blocks.push({kind: 'heading', level: heading[1].length, text: heading[2]})
      i++
    } else if (image) {
      blocks.push({kind: 'image', alt: image[1], src: image[2]})
      i++
    } else if (line.startsWith('|')) {
      const rows: string[] = []
      while (i < lines.length && lines[i].startsWith('|')) rows.push(lines[i++])
      const header = cells(rows[0])
      const sep = rows[1] && /^\|[\s:|-]+\|$/.test(rows[1].trim()) ? cells(rows[1]) : null
      const align = header.map((_, k) => (sep?.[k]?.endsWith(':') ? ('right' as const) : ('left' as const)))
      blocks.push({kind: 'table', header, align, rows: rows.slice(sep ? 2 : 1).map(cells)})
    } else if (line.startsWith('- ')) {
      const items: string[] = []
      while (i < lines.length && lines[i].startsWith('- ')) items.push(lines[i++].slice(2))
      blocks.push({kind: 'list', items})
    } else {
      const para: string[] = []
      while (i < lines.length && lines[i].trim() !== '' && !/^(#|\||- |!\[)/.test(lines[i])) para.push(lines[i++])
      blocks.push({kind: 'paragraph', text: para.join(' ')})
    }
  }
  return blocks
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
}

/** A script's text made safe to sit inside <script>…</script>. */
function scriptText(js: string): string {
  return js.replace(/<\/(script)/gi, '<\\/$1').replace(/^\/\/# sourceMappingURL=.*$/gm, '')
}

/** JSON inside <script type="application/json">: no "<" can close the element. */
function jsonText(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c')
}

/** The interactive report: report.md's content, charts as live vega-lite views, everything inlined. */
export function renderHtml(r: Report): string {
  const md = renderMarkdown(r)
  const specs = new Map(studyCharts(r.phases).map((c) => [c.id, c.spec]))
  const chartByPng = new Map((r.phases.visualize?.charts ?? []).map((c) => [c.png, c]))
  const embedded: Record<string, unknown> = {}
  const body: string[] = []
  const toc: string[] = []
  for (const b of markdownBlocks(md)) {
    if (b.kind === 'heading') {
      const id = slug(b.text)
      if (b.level === 2) toc.push(`<li><a href="#${id}">${inline(b.text)}</a></li>`)
      body.push(`<h${b.level} id="${id}">${inline(b.text)}</h${b.level}>`)
    } else if (b.kind === 'paragraph') body.push(`<p>${inline(b.text)}</p>`)
    else if (b.kind === 'list') body.push(`<ul>${b.items.map((t) => `<li>${inline(t)}</li>`).join('')}</ul>`)
    else if (b.kind === 'table') {
      const th = b.header.map((h, k) => `<th${b.align[k] === 'right' ? ' class="num"' : ''}>${inline(h)}</th>`).join('')
      const rows = b.rows
        .map(
          (row) =>
            `<tr>${row.map((c, k) => `<td${b.align[k] === 'right' ? ' class="num"' : ''}>${inline(c)}</td>`).join('')}</tr>`,
        )
        .join('\n')
      body.push(
        `<div class="wrap"><table class="sortable"><thead><tr>${th}</tr></thead><tbody>\n${rows}\n</tbody></table></div>`,
      )
    } else {
      const chart = chartByPng.get(b.src)
      const spec = chart ? specs.get(chart.id) : undefined
      if (chart && spec) {
        embedded[chart.id] = spec
        body.push(
          `<div class="chart" id="chart-${escapeHtml(chart.id)}" data-chart-id="${escapeHtml(chart.id)}" role="img" aria-label="${escapeHtml(b.alt)}"><noscript><img src="${escapeHtml(b.src)}" alt="${escapeHtml(b.alt)}"></noscript></div>`,
        )
      } else body.push(`<p><a href="${escapeHtml(b.src)}">${escapeHtml(b.alt)}</a></p>`)
    }
  }
  const vendor = (Object.keys(VENDOR_SCRIPTS) as VendorScript[]).map(
    (name) =>
      `<script>/* ${name} from node_modules */\n${scriptText(readFileSync(vendorScriptPath(name), 'utf8'))}</script>`,
  )
  const css = readFileSync(join(WEB_ASSETS_DIR, 'kt.css'), 'utf8')
  const charts = scriptText(readFileSync(join(WEB_ASSETS_DIR, 'charts.js'), 'utf8'))
  const title = `kt study: ${r.run.plan.name} (${r.run.id})`
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<style>${css}
nav.toc ul { columns: 2; font-size: 13px; } .chart { margin: .5em 0 1em; overflow-x: auto; }
</style>
${vendor.join('\n')}
<script>${charts}</script>
</head><body>
<header><span class="brand">kt report</span> <span class="store">${escapeHtml(r.run.id)}</span><span class="live muted" style="color:inherit">hover a point for its configuration and metrics; drag to pan, scroll to zoom; click a table header to sort</span></header>
<main>
${body[0] ?? ''}
<nav class="toc"><ul>${toc.join('')}</ul></nav>
${body.slice(1).join('\n')}
</main>
<script type="application/json" id="kt-chart-specs">${jsonText(embedded)}</script>
<script>
(function () {
  var specs = JSON.parse(document.getElementById('kt-chart-specs').textContent)
  var jobs = Array.prototype.map.call(document.querySelectorAll('[data-chart-id]'), function (el) {
    var id = el.getAttribute('data-chart-id')
    return ktEmbed(el, specs[id], id).catch(function (e) { el.textContent = 'chart ' + id + ' could not be drawn: ' + e.message; throw e })
  })
  ktSortable(document)
  Promise.all(jobs).then(function () { document.body.setAttribute('data-rendered', String(Date.now())) })
})()
</script>
</body></html>
`
}
