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

  /** Embeds `spec` in `el`, registers the view under `id`; resolves to the view. */
  window.ktEmbed = function (el, spec, id, datasets) {
    var s = Object.assign({}, spec)
    if (datasets) s.datasets = Object.assign({}, s.datasets || {}, datasets)
    if (!s.$schema) s.$schema = 'https://vega.github.io/schema/vega-lite/v6.json'
    if (s.width === 'container' && typeof s.height === 'number') s.autosize = {type: 'fit-x', contains: 'padding'}
    el.setAttribute('data-chart', id)
    var opts = {actions: false, renderer: rowCount(s) > CANVAS_ROWS ? 'canvas' : 'svg', tooltip: {theme: 'light', maxDepth: 1}}
    return vegaEmbed(el, s, opts).then(function (r) {
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
