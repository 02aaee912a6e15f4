/*
 * kt dashboard pages: the studies list (/), a study (/study/NAME) and studies side by side
 * (/compare?study=A&study=B). Data from the JSON endpoints of src/dashboard/server.ts; chart specs
 * come from the server (src/dashboard/charts.ts) and this script fills their datasets. Live: it
 * polls /api/version and re-renders what changed, without a reload. Plain browser JavaScript.
 */
;(function () {
  'use strict'
  var app = document.getElementById('app')
  var live = document.getElementById('live')
  /** Rows per page of the trials table (all rows are filtered and sorted; only a page is drawn). */
  var PAGE_ROWS = 100
  /** The front chart draws the lower-budget trials too while the chart stays under this many points. */
  var FRONT_CONTEXT_MAX = 3000

  function h(tag, attrs, children) {
    var el = document.createElement(tag)
    for (var k in attrs || {}) {
      if (k === 'text') el.textContent = attrs[k]
      else if (k === 'html') el.innerHTML = attrs[k]
      else if (k.slice(0, 2) === 'on') el.addEventListener(k.slice(2), attrs[k])
      else if (attrs[k] !== null && attrs[k] !== undefined && attrs[k] !== false) el.setAttribute(k, attrs[k])
    }
    ;(children || []).forEach(function (c) { if (c !== null && c !== undefined) el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c) })
    return el
  }

  function fmt(x, digits) {
    if (x === null || x === undefined) return '-'
    if (typeof x !== 'number') return String(x)
    if (Number.isInteger(x)) return String(x)
    var a = Math.abs(x)
    return a !== 0 && (a < 1e-3 || a >= 1e5) ? x.toExponential(3) : x.toFixed(digits === undefined ? 4 : digits)
  }

  function getJson(url) {
    return fetch(url, {cache: 'no-store'}).then(function (r) {
      return r.json().then(function (body) {
        if (!r.ok) throw new Error(body.error || r.status + ' ' + r.statusText)
        return body
      })
    })
  }

  function fail(error) {
    app.innerHTML = ''
    app.appendChild(h('p', {class: 'error', text: String(error.message || error)}))
  }

  /* ---------------------------------------------------------------- live polling */
  var pollTimer = null
  /** Polls /api/version; calls onChange when the watched part (`pick` of the versions; all by default) changes. */
  function poll(pollMs, versions, onChange, pick) {
    clearTimeout(pollTimer)
    var watched = pick || function (all) { return all }
    var known = JSON.stringify(watched(versions))
    function tick() {
      getJson('/api/version').then(function (v) {
        live.classList.remove('stale')
        var now = JSON.stringify(watched(v.versions))
        if (now !== known) {
          known = now
          return Promise.resolve(onChange(v.versions)).then(schedule)
        }
        schedule()
      }).catch(function () {
        live.classList.add('stale')
        schedule()
      })
    }
    function schedule() { pollTimer = setTimeout(tick, pollMs) }
    schedule()
  }

  /* ---------------------------------------------------------------- studies list */
  function listPage() {
    document.title = 'kt dashboard: studies'
    return getJson('/api/studies').then(function (data) {
      renderList(data)
      poll(data.poll_ms, data.versions, function () { return getJson('/api/studies').then(renderList) })
    })
  }

  function renderList(data) {
    var checked = {}
    Array.prototype.forEach.call(app.querySelectorAll('input[name=cmp]:checked'), function (c) { checked[c.value] = true })
    app.innerHTML = ''
    app.appendChild(h('h1', {text: 'Studies'}))
    if (data.studies.length === 0) {
      app.appendChild(h('p', {text: 'No studies in this store yet. Studies appear here as soon as kt search or kt run writes them.'}))
      return
    }
    var compare = h('button', {id: 'compare', type: 'button', onclick: function () {
      var names = Array.prototype.map.call(app.querySelectorAll('input[name=cmp]:checked'), function (c) { return 'study=' + encodeURIComponent(c.value) })
      if (names.length >= 2) location.href = '/compare?' + names.join('&')
      else alert('Tick two or more studies to compare.')
    }}, ['Compare the ticked studies on one chart'])
    app.appendChild(h('div', {class: 'toolbar'}, [compare, h('span', {class: 'muted', text: data.studies.length + ' studies; click a header to sort'})]))
    var head = h('tr', {}, ['', 'study', 'objective', 'optimizer', 'state', 'trials', 'ok', 'failed', 'running', 'best value', 'value', 'last activity'].map(function (t, i) {
      return h('th', {class: i >= 5 && i <= 9 ? 'num' : null, text: t})
    }))
    var body = h('tbody', {}, data.studies.map(function (s) {
      return h('tr', {'data-study': s.name}, [
        h('td', {}, [h('input', {type: 'checkbox', name: 'cmp', value: s.name, checked: checked[s.name] ? 'checked' : null, 'aria-label': 'compare ' + s.name})]),
        h('td', {}, [h('a', {href: '/study/' + encodeURIComponent(s.name), text: s.name})]),
        h('td', {text: s.objective}), h('td', {text: s.optimizer}),
        h('td', {class: 'state-' + s.state, text: s.state}),
        h('td', {class: 'num', text: String(s.trials)}), h('td', {class: 'num', text: String(s.ok)}),
        h('td', {class: 'num', text: String(s.failed)}), h('td', {class: 'num', text: String(s.running)}),
        h('td', {class: 'num', 'data-v': s.best_value === null ? '' : String(s.best_value), text: fmt(s.best_value)}),
        h('td', {text: s.value_name}), h('td', {text: s.last_activity}),
      ])
    }))
    app.appendChild(h('div', {class: 'wrap'}, [h('table', {class: 'sortable', id: 'studies'}, [h('thead', {}, [head]), body])]))
    ktSortable(app)
  }

  /* ---------------------------------------------------------------- one study */
  /** What the front's latency axis is, by the study's latency kind (src/report/front-chart.ts LatencyKind). */
  var LATENCY_NOTES = {
    estimated: 'P99 latency is the cost model\'s estimate (deterministic); measured timings are the measured_* metrics in the tooltip and table.',
    declared: 'Latency is the engine\'s declared cost model.',
    measured: 'Latency is wall time measured on kt\'s side: it differs between runs and with the machine\'s load.',
    reported: 'Latency is the figure the engine reports.',
  }
  /** The front chart's sets (src/report/front-chart.ts FRONT_SETS). */
  var LOWER = 'lower budget (fewer queries)'

  /** Points a scatter draws at most: past this the page thins the points it draws (and says how many). */
  var SCATTER_MAX = 2000

  /** Each trial's set in the front chart (null: not charted), by column position. */
  function frontSets(view) {
    var t = view.trials
    var sets = new Array(t.id.length).fill(null)
    if (!view.front) return sets
    var on = {}
    view.front.points.forEach(function (id) { on[id] = 'Pareto front' })
    view.front.dominated.forEach(function (id) { on[id] = 'dominated' })
    for (var i = 0; i < t.id.length; i++) sets[i] = on[t.id[i]] || (t.status[i] === 'ok' && t.budget[i] < view.max_budget ? LOWER : null)
    return sets
  }

  /** Trial i of the column-wise view as one object: what the table and the tooltips read. */
  function rowAt(view, sets, i) {
    var t = view.trials
    var r = {trial: t.id[i], budget: t.budget[i], status: t.status[i], value: t.value[i], order: t.order[i], best_so_far: t.best_so_far[i], budget_so_far: t.budget_so_far[i]}
    if (view.front) r.set = sets[i]
    for (var m in t.metric) r[m] = t.metric[m][i]
    for (var p in t.config) r[p] = t.config[p][i]
    return r
  }

  /** Every trial as an object (built on first need: a 100,000-trial page draws without them). */
  function trialRows(view, sets) {
    var rows = new Array(view.trials.id.length)
    for (var i = 0; i < rows.length; i++) rows[i] = rowAt(view, sets, i)
    return rows
  }

  /** Every k-th of `indices` (and every index `keep` marks) so that about `max` are left; `indices` itself when it has no more than `max`. */
  function thin(indices, max, keep) {
    if (indices.length <= max) return indices
    var step = Math.ceil(indices.length / max)
    return indices.filter(function (i, k) { return k % step === 0 || (keep && keep(i)) })
  }

  /** Long-format rows of the best trials for parallel coordinates, each parameter scaled to [0, 1]. */
  function parallelRows(view, sets, max) {
    var t = view.trials
    var idx = []
    for (var i = 0; i < t.id.length; i++) if (t.value[i] !== null) idx.push(i)
    idx.sort(function (a, b) { return view.value.sense === 'max' ? t.value[b] - t.value[a] : t.value[a] - t.value[b] })
    var ok = idx.slice(0, max).map(function (i) { return rowAt(view, sets, i) })
    var out = []
    view.params.forEach(function (p) {
      var vals = ok.map(function (r) { return r[p] })
      var numeric = vals.every(function (v) { return typeof v === 'number' })
      var cats = numeric ? null : Array.from(new Set(vals.map(String))).sort()
      var lo = numeric ? Math.min.apply(null, vals) : 0
      var hi = numeric ? Math.max.apply(null, vals) : 0
      ok.forEach(function (r) {
        var v = r[p]
        var scaled = numeric ? (hi > lo ? (v - lo) / (hi - lo) : 0.5) : cats.length > 1 ? cats.indexOf(String(v)) / (cats.length - 1) : 0.5
        out.push({trial: r.trial, param: p, scaled: scaled, raw: v, value: r.value})
      })
    })
    return out
  }

  /** Column positions of the finished trials in finish order, and the progress charts' slim rows of positions. */
  function finishOrder(t) {
    var idx = []
    for (var i = 0; i < t.id.length; i++) if (t.order[i] !== null) idx.push(i)
    return idx.sort(function (a, b) { return t.order[a] - t.order[b] })
  }
  function slimRows(t, idx) {
    return idx.map(function (i) { return {trial: t.id[i], budget: t.budget[i], status: t.status[i], value: t.value[i], order: t.order[i], best_so_far: t.best_so_far[i], budget_so_far: t.budget_so_far[i]} })
  }

  /** A step line needs only the points (in finish order) where the best value changes, and the last one. */
  function stepIndices(t, ordered) {
    var idx = ordered.filter(function (i) { return t.best_so_far[i] !== null })
    return idx.filter(function (i, k) { return k === 0 || k === idx.length - 1 || t.best_so_far[i] !== t.best_so_far[idx[k - 1]] })
  }

  function chartBox(id, note) {
    return h('div', {class: 'chart'}, [h('div', {id: 'chart-' + id}), note ? h('p', {class: 'note', id: id + '-note', text: note}) : null])
  }

  var tableState = {filter: '', sort: null, dir: 1, page: 0}

  /** Filter: space-separated terms, each `field<op>value` (op = != >= <= > < or =) or plain text matched anywhere. */
  function matcher(text) {
    var terms = text.trim().split(/\s+/).filter(Boolean).map(function (term) {
      var m = /^([^=<>!]+)(!=|>=|<=|=|>|<)(.+)$/.exec(term)
      if (!m) return function (r) { return JSON.stringify(r).toLowerCase().indexOf(term.toLowerCase()) >= 0 }
      var field = m[1], op = m[2], want = m[3]
      return function (r) {
        var v = r[field]
        if (v === undefined) return false
        var a = typeof v === 'number' ? v : String(v)
        var b = typeof v === 'number' ? Number(want) : want
        switch (op) {
          case '=': return a == b
          case '!=': return a != b
          case '>': return a > b
          case '<': return a < b
          case '>=': return a >= b
          default: return a <= b
        }
      }
    })
    return function (r) { return terms.every(function (t) { return t(r) }) }
  }

  /** The table's trials: objects for all of them only once a filter or a sort needs them. */
  function tableSource(view, sets) {
    var all = null
    return {
      count: view.trials.id.length,
      all: function () { return all || (all = trialRows(view, sets)) },
      range: function (from, to) {
        var out = []
        for (var i = from; i < Math.min(to, this.count); i++) out.push(all ? all[i] : rowAt(view, sets, i))
        return out
      },
    }
  }

  function renderTable(container, view, rows) {
    var cols = ['trial', 'budget', 'status', 'value'].concat(view.front ? ['set'] : [], view.metrics, view.params)
    var whole = !tableState.filter.trim() && tableState.sort === null
    var filtered = whole ? {length: rows.count, slice: rows.range.bind(rows)} : rows.all().filter(matcher(tableState.filter))
    if (tableState.sort !== null) {
      var key = cols[tableState.sort], dir = tableState.dir
      filtered.sort(function (a, b) {
        var x = a[key], y = b[key]
        if (x === null || x === undefined) return y === null || y === undefined ? 0 : 1
        if (y === null || y === undefined) return -1
        return dir * (typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y)))
      })
    }
    var pages = Math.max(1, Math.ceil(filtered.length / PAGE_ROWS))
    tableState.page = Math.min(tableState.page, pages - 1)
    var shown = filtered.slice(tableState.page * PAGE_ROWS, (tableState.page + 1) * PAGE_ROWS)
    var bestId = view.best ? view.best.id : null
    var head = h('tr', {}, cols.map(function (c, i) {
      return h('th', {'aria-sort': tableState.sort === i ? (tableState.dir === 1 ? 'ascending' : 'descending') : null, text: c === 'value' ? view.value.name : c})
    }))
    var body = h('tbody', {}, shown.map(function (r) {
      return h('tr', {class: r.trial === bestId ? 'best' : null}, cols.map(function (c) {
        var v = r[c]
        return h('td', {class: typeof v === 'number' ? 'num' : null, text: fmt(v)})
      }))
    }))
    var table = h('table', {class: 'sortable', id: 'trials'}, [h('thead', {}, [head]), body])
    var pager = h('span', {class: 'pager'}, [
      h('button', {type: 'button', disabled: tableState.page === 0 ? 'disabled' : null, onclick: function () { tableState.page--; renderTable(container, view, rows) }}, ['‹ previous']),
      ' page ' + (tableState.page + 1) + ' of ' + pages + ' ',
      h('button', {type: 'button', disabled: tableState.page >= pages - 1 ? 'disabled' : null, onclick: function () { tableState.page++; renderTable(container, view, rows) }}, ['next ›']),
    ])
    var count = h('span', {class: 'muted', id: 'trial-count', text: filtered.length + ' of ' + rows.count + ' trials'})
    container.querySelector('.table-meta').replaceChildren(count, pager)
    container.querySelector('.wrap').replaceChildren(table)
    ktSortable(container, function (i, dir) {
      tableState.sort = i
      tableState.dir = dir
      renderTable(container, view, rows)
    })
  }

  function studyPage(name) {
    document.title = 'kt dashboard: ' + name
    var importanceTarget = 'loss'
    return getJson('/api/studies/' + encodeURIComponent(name)).then(function (data) {
      renderStudy(data)
      // this study's version only: another study's trials do not redraw this page
      var own = {}
      own[name] = data.version
      poll(data.poll_ms, own, function () {
        return getJson('/api/studies/' + encodeURIComponent(name)).then(renderStudy)
      }, function (all) { return all[name] })
    })

    function renderStudy(data) {
      var view = data.view
      var sets = frontSets(view)
      var rows = tableSource(view, sets)
      var scrollY = window.scrollY
      app.innerHTML = ''
      app.appendChild(h('p', {}, [h('a', {href: '/', text: '← all studies'})]))
      app.appendChild(h('h1', {text: 'Study ' + view.name}))
      var okCount = view.trials.status.filter(function (s) { return s === 'ok' }).length
      var running = view.trials.status.filter(function (s) { return s === 'running' }).length
      app.appendChild(h('p', {id: 'summary'}, [
        view.optimizer + ' on ' + ((view.objective && view.objective.name) || '?') + ', seed ' + view.seed + ', ',
        h('span', {class: 'state-' + view.state, text: view.state}),
        '; ' + view.trials.id.length + ' trials (' + okCount + ' ok, ' + running + ' running); value: ' + view.value.name + ' (' + (view.value.sense === 'max' ? 'higher' : 'lower') + ' is better). ',
        view.best ? 'Best: trial ' + view.best.id + ' at budget ' + view.best.budget + ', ' + fmt(view.best.value) + '.' : 'No successful trial yet.',
      ]))
      var grid = h('div', {class: 'grid'})
      app.appendChild(h('h2', {text: 'Progress'}))
      app.appendChild(grid)
      grid.appendChild(chartBox('history', 'Each dot is a trial (colour: budget); the red line is the best value so far at the largest budget reached (the incumbent rule). Drag to pan, scroll to zoom, hover for the trial.'))
      grid.appendChild(chartBox('budget', 'Budget consumed counts a continued trial only for the budget beyond the one it continues.'))
      if (data.charts.front) {
        app.appendChild(h('h2', {text: 'Pareto front'}))
        app.appendChild(chartBox('front', 'Front and dominated trials at the largest budget; grey: trials at lower budgets (fewer queries, not comparable). ' + LATENCY_NOTES[view.front.latency_kind] + ' Hypervolume ' + fmt(view.front.hypervolume) + ' (' + (100 * view.front.hypervolume_share).toFixed(1) + '% of the reference box; ' + view.front.reference.rule + ').'))
      }
      if (view.profiles.length) {
        app.appendChild(h('h2', {text: view.objective && view.objective.name === 'engine' ? 'Profiles (the engine file\'s rules)' : 'Domain profiles'}))
        app.appendChild(h('ul', {class: 'profiles', id: 'profiles'}, view.profiles.map(function (p) {
          return h('li', {}, [h('strong', {text: p.name}), ' (' + p.description + '): ' + (p.trial === null ? 'no trial meets it' : 'trial ' + p.trial + (p.on_front ? ', on the front' : '')),
            h('ul', {}, p.rationale.map(function (r) { return h('li', {text: r}) }))])
        })))
      }
      if (data.charts.per_type) {
        app.appendChild(h('h2', {text: 'Per query type (routed)'}))
        app.appendChild(chartBox('per_type', null))
      }
      app.appendChild(h('h2', {text: 'Parameters'}))
      var pgrid = h('div', {class: 'grid'})
      app.appendChild(pgrid)
      pgrid.appendChild(chartBox('parallel', null))
      var impBox = h('div', {class: 'chart'}, [
        h('div', {class: 'toolbar'}, [h('label', {}, ['importance for ', targetSelect(view)])]),
        h('div', {id: 'chart-importance'}), h('p', {class: 'note', id: 'importance-note'}),
      ])
      pgrid.appendChild(impBox)
      app.appendChild(h('h2', {text: 'Trials'}))
      var tableBox = h('div', {id: 'trials-box'}, [
        h('div', {class: 'toolbar'}, [
          h('input', {type: 'text', id: 'filter', value: tableState.filter, placeholder: 'filter: status=ok budget>=3 bm25.k1<1 or any text', oninput: function (e) {
            tableState.filter = e.target.value
            tableState.page = 0
            renderTable(tableBox, view, rows)
          }}),
          h('span', {class: 'table-meta'}),
        ]),
        h('div', {class: 'wrap'}),
      ])
      app.appendChild(tableBox)
      renderTable(tableBox, view, rows)
      // each chart gets rows of its own (vega tags the objects it ingests, so views must not share them)
      // a 100,000-trial study draws a thinned sample of its points (every new best kept), and says so
      var t = view.trials
      var ordered = finishOrder(t)
      var steps = stepIndices(t, ordered)
      var isStep = {}
      steps.forEach(function (i) { isStep[i] = true })
      var valued = ordered.filter(function (i) { return t.value[i] !== null })
      var drawn = thin(valued, SCATTER_MAX, function (i) { return isStep[i] })
      if (drawn.length < valued.length) document.getElementById('history-note').textContent += ' ' + drawn.length + ' of ' + valued.length + ' trials drawn (every ' + Math.ceil(valued.length / SCATTER_MAX) + 'th in finish order, and every new best).'
      var jobs = [
        ktEmbed(document.getElementById('chart-history'), data.charts.history, 'history', {trials: slimRows(t, drawn), steps: slimRows(t, steps)}),
        ktEmbed(document.getElementById('chart-budget'), data.charts.budget, 'budget', {trials: slimRows(t, steps)}),
        ktEmbed(document.getElementById('chart-parallel'), data.charts.parallel, 'parallel', {parallel: parallelRows(view, sets, 200)}),
      ]
      if (data.charts.front) {
        // lower-budget trials are context, not candidates: past FRONT_CONTEXT_MAX points only the largest budget is drawn,
        // and past SCATTER_MAX a thinned sample of the dominated trials (the front always whole)
        var bySet = {'Pareto front': [], dominated: []}
        bySet[LOWER] = []
        sets.forEach(function (set, i) { if (set !== null) bySet[set].push(i) })
        var note = document.getElementById('front-note')
        var lower = bySet[LOWER].length
        if (lower + bySet.dominated.length + bySet['Pareto front'].length > FRONT_CONTEXT_MAX) {
          bySet[LOWER] = []
          note.textContent += ' ' + lower + ' trials at lower budgets are not drawn (more than ' + FRONT_CONTEXT_MAX + ' points); filter the table by budget to see them.'
        }
        var dominated = bySet.dominated.length
        bySet.dominated = thin(bySet.dominated, SCATTER_MAX)
        if (bySet.dominated.length < dominated) note.textContent += ' ' + bySet.dominated.length + ' of ' + dominated + ' dominated trials drawn (every ' + Math.ceil(dominated / SCATTER_MAX) + 'th); the table lists them all.'
        var frontIdx = bySet[LOWER].concat(bySet.dominated, bySet['Pareto front'])
        jobs.push(ktEmbed(document.getElementById('chart-front'), data.charts.front, 'front', {trials: frontIdx.map(function (i) { return rowAt(view, sets, i) })}))
      }
      if (data.charts.per_type) {
        var pt = []
        view.per_type.forEach(function (t) {
          pt.push({type: t.type, source: 'this study\'s best', quality: t.base_quality, study: view.name, queries: t.queries})
          if (t.type_best !== null) pt.push({type: t.type, source: 'the type\'s own study', quality: t.type_best, study: t.type_study, queries: t.queries})
        })
        jobs.push(ktEmbed(document.getElementById('chart-per_type'), data.charts.per_type, 'per_type', {per_type: pt}))
      }
      // importance fits a forest on the server: it arrives after the page is drawn
      loadImportance(view).then(function () { document.body.setAttribute('data-importance', '1') })
      window.scrollTo(0, scrollY)
      return Promise.all(jobs).then(rendered)
    }

    function targetSelect(view) {
      var options = ['loss'].concat(view.metrics.filter(function (m) { return !/^queries/.test(m) }))
      var sel = h('select', {id: 'importance-target', onchange: function (e) { importanceTarget = e.target.value; loadImportance(view) }},
        options.map(function (m) { return h('option', {value: m, selected: m === importanceTarget ? 'selected' : null, text: m === 'loss' ? 'the loss (what the optimiser minimised)' : m}) }))
      return sel
    }

    function loadImportance(view) {
      var note = document.getElementById('importance-note')
      return getJson('/api/studies/' + encodeURIComponent(view.name) + '/importance?target=' + encodeURIComponent(importanceTarget)).then(function (d) {
        var imp = d.importance
        note.textContent = imp.note ? imp.note : imp.method + '; ' + imp.trials_used + ' of ' + imp.trials_ok + ' successful trials, ' + imp.trees + ' trees, seed ' + imp.seed + '. Also: kt study importance ' + view.name + ' --json.'
        return ktEmbed(document.getElementById('chart-importance'), d.chart, 'importance', {importance: imp.params})
      }).catch(function (e) { note.textContent = 'importance: ' + e.message })
    }
  }

  /* ---------------------------------------------------------------- side by side */
  function comparePage() {
    var names = new URLSearchParams(location.search).getAll('study')
    document.title = 'kt dashboard: ' + names.join(' vs ')
    var url = '/api/compare?' + names.map(function (n) { return 'study=' + encodeURIComponent(n) }).join('&')
    return getJson(url).then(function (data) {
      render(data)
      poll(data.poll_ms, data.versions, function () { return getJson(url).then(render) }, function (all) {
        return names.map(function (n) { return all[n] })
      })
    })
    function render(data) {
      app.innerHTML = ''
      app.appendChild(h('p', {}, [h('a', {href: '/', text: '← all studies'})]))
      app.appendChild(h('h1', {text: 'Side by side: ' + names.join(' vs ')}))
      var rows = []
      var fronts = []
      data.views.forEach(function (v) {
        trialRows(v, frontSets(v)).forEach(function (r) {
          if (r.best_so_far !== null) rows.push({study: v.name, trial: r.trial, order: r.order, budget_so_far: r.budget_so_far, best_so_far: r.best_so_far})
          if (v.front && (r.set === 'Pareto front' || r.set === 'dominated')) fronts.push({study: v.name, trial: r.trial, set: r.set, p99_ms: r[v.front.latency], quality: r[v.front.quality_metric]})
        })
      })
      var grid = h('div', {class: 'grid'})
      app.appendChild(grid)
      grid.appendChild(chartBox('compare-trials', null))
      grid.appendChild(chartBox('compare-budget', null))
      var jobs = [
        ktEmbed(document.getElementById('chart-compare-trials'), data.charts.trials, 'compare-trials', {compare: rows}),
        ktEmbed(document.getElementById('chart-compare-budget'), data.charts.budget, 'compare-budget', {compare: rows}),
      ]
      if (data.charts.front) {
        grid.appendChild(chartBox('compare-front', 'Faint points: dominated trials.'))
        jobs.push(ktEmbed(document.getElementById('chart-compare-front'), data.charts.front, 'compare-front', {compare_front: fronts}))
      }
      var head = h('tr', {}, ['study', 'optimizer', 'trials', 'best value', 'value'].map(function (t) { return h('th', {text: t}) }))
      app.appendChild(h('table', {class: 'sortable'}, [h('thead', {}, [head]), h('tbody', {}, data.views.map(function (v) {
        return h('tr', {}, [h('td', {}, [h('a', {href: '/study/' + encodeURIComponent(v.name), text: v.name})]), h('td', {text: v.optimizer}),
          h('td', {class: 'num', text: String(v.trials.id.length)}), h('td', {class: 'num', text: fmt(v.best ? v.best.value : null)}), h('td', {text: v.value.name})])
      }))]))
      ktSortable(app)
      return Promise.all(jobs).then(rendered)
    }
  }

  /** Marks the page drawn (tests wait for it; kt bench dashboard reads the time). */
  function rendered() {
    window.ktRenderedAt = performance.now()
    document.body.setAttribute('data-rendered', String(Date.now()))
  }

  var path = location.pathname
  var done = path.indexOf('/study/') === 0 ? studyPage(decodeURIComponent(path.slice('/study/'.length)))
    : path === '/compare' ? comparePage()
    : listPage().then(rendered)
  done.catch(fail)
})()
