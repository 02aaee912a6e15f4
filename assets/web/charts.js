/*
 * kt's page helpers, shared by the HTML report (inlined) and the dashboard (served): embed a
 * vega-lite spec with tooltips, keep every chart's vega View in window.ktCharts (tests and the
 * console read marks from there), and make tables sortable by clicking their headers.
 * Plain browser JavaScript: no build step.
 */
;(function () {
  'use strict'
  /** Above this many data rows a chart draws on canvas (thousands of SVG nodes are slow to lay out). */
  var CANVAS_ROWS = 2000
  window.ktCharts = window.ktCharts || {}

  function rowCount(spec) {
    var n = 0
    var ds = spec.datasets || {}
    for (var k in ds) n = Math.max(n, ds[k].length)
    if (spec.data && spec.data.values) n = Math.max(n, spec.data.values.length)
    return n
  }

  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) { return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c] })
  }

  /** Numbers to four significant digits (the table and the JSON keep full precision). */
  function short(v) {
    return typeof v === 'number' && isFinite(v) && !Number.isInteger(v) ? String(Number(v.toPrecision(4))) : String(v)
  }

  /**
   * A trial's tooltip holds its configuration and every metric (30-50 fields): laid out in up to
   * three key/value columns so it fits on screen.
   */
  function formatTooltip(value, valueToHtml) {
    if (value === null || typeof value !== 'object') return valueToHtml(value)
    var keys = Object.keys(value).filter(function (k) { return k !== 'title' && k.charAt(0) !== '_' && value[k] !== null && value[k] !== undefined && typeof value[k] !== 'object' })
    var cols = keys.length > 36 ? 3 : keys.length > 12 ? 2 : 1
    var title = value.title !== undefined ? '<h2>' + esc(value.title) + '</h2>' : ''
    return title + '<div class="kt-tip" style="grid-template-columns: repeat(' + cols + ', auto auto)">' + keys.map(function (k) {
      return '<span class="key">' + esc(k) + '</span><span class="value">' + esc(short(value[k])) + '</span>'
    }).join('') + '</div>'
  }

  /** Embeds `spec` in `el`, registers the view under `id`; resolves to the view. */
  window.ktEmbed = function (el, spec, id, datasets) {
    var s = Object.assign({}, spec)
    // named datasets go in after compiling: vega-lite would copy thousands of rows through its compiler
    var late = {}
    for (var name in datasets || {}) late[name] = datasets[name]
    var rows = 0
    for (var n in late) rows = Math.max(rows, late[n].length)
    if (!s.$schema) s.$schema = 'https://vega.github.io/schema/vega-lite/v6.json'
    if (s.width === 'container' && typeof s.height === 'number') s.autosize = {type: 'fit-x', contains: 'padding'}
    el.setAttribute('data-chart', id)
    var opts = {actions: false, renderer: Math.max(rows, rowCount(s)) > CANVAS_ROWS ? 'canvas' : 'svg', tooltip: {theme: 'light', maxDepth: 1, formatTooltip: formatTooltip}}
    return vegaEmbed(el, s, opts).then(function (r) {
      var names = Object.keys(late)
      if (names.length === 0) return r
      names.forEach(function (name) { r.view.data(name, late[name]) })
      return r.view.runAsync().then(function () { return r })
    }).then(function (r) {
      var old = window.ktCharts[id]
      if (old && old !== r.view) old.finalize()
      window.ktCharts[id] = r.view
      el.setAttribute('data-ready', '1')
      return r.view
    })
  }

  /** Number of drawn mark items (points, lines, bars, …) in a chart's scene graph, axes and legends excluded. */
  window.ktMarkCount = function (id) {
    var view = window.ktCharts[id]
    if (!view) return -1
    var count = 0
    ;(function walk(node) {
      if (!node) return
      // user marks have role 'mark'; axes, legends and titles draw with roles of their own
      if (node.marktype && node.marktype !== 'group' && node.role === 'mark') count += (node.items || []).length
      ;(node.items || []).forEach(walk)
    })(view.scenegraph().root)
    return count
  }

  function cellValue(td) {
    var v = td.getAttribute('data-v')
    return v !== null ? v : td.textContent
  }

  /** Sorts a table's body by column `col`; numbers numerically, empty cells last. */
  function sortTable(table, col, dir) {
    var body = table.tBodies[0]
    if (!body) return
    var rows = Array.prototype.slice.call(body.rows)
    var numeric = rows.every(function (r) {
      var v = cellValue(r.cells[col] || {textContent: ''}).trim()
      return v === '' || v === '-' || !isNaN(Number(v.replace(/[%,]/g, '')))
    })
    rows.sort(function (a, b) {
      var x = cellValue(a.cells[col]).trim()
      var y = cellValue(b.cells[col]).trim()
      var ex = x === '' || x === '-'
      var ey = y === '' || y === '-'
      if (ex || ey) return ex === ey ? 0 : ex ? 1 : -1
      var c = numeric ? Number(x.replace(/[%,]/g, '')) - Number(y.replace(/[%,]/g, '')) : x.localeCompare(y)
      return dir * c
    })
    rows.forEach(function (r) { body.appendChild(r) })
  }

  /** Makes every table under `root` sortable (click a header; click again to reverse). */
  window.ktSortable = function (root, onSort) {
    Array.prototype.forEach.call((root || document).querySelectorAll('table.sortable'), function (table) {
      if (table.getAttribute('data-sortable') === '1') return
      table.setAttribute('data-sortable', '1')
      var heads = table.tHead ? table.tHead.rows[0].cells : []
      Array.prototype.forEach.call(heads, function (th, i) {
        th.setAttribute('role', 'button')
        th.title = 'sort by ' + th.textContent
        th.addEventListener('click', function () {
          var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1
          Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort') })
          th.setAttribute('aria-sort', dir === 1 ? 'ascending' : 'descending')
          if (onSort) onSort(i, dir)
          else sortTable(table, i, dir)
        })
      })
    })
  }
})()
