/* graphmem graph page: draws the JSON in #graphmem-data with vis-network.
 *
 * Every string in the data is untrusted memory content. It reaches the DOM only through
 * textContent (tooltips and the side panel are DOM elements, never HTML strings), so markup in
 * a memory is shown as text and never parsed.
 *
 * What is drawn is one function of the controls (applyFilters): a relation is shown when its
 * kind (typed, or co-occurrence behind its toggle), predicate, status (current or ended) and
 * dates (the "as of" day) pass and both its entities are shown; an entity is shown when its
 * type passes and, with a day chosen, it was first seen by then. The layout is computed once
 * (stabilisation) and then frozen, so filtering never moves anything.
 */
(function () {
  "use strict";

  var data = JSON.parse(document.getElementById("graphmem-data").textContent);
  var DAY_MS = 86400000;

  function byId(id) {
    return document.getElementById(id);
  }

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) {
      node.className = className;
    }
    if (text !== undefined && text !== null) {
      node.textContent = String(text);
    }
    return node;
  }

  function tooltipElement(tip) {
    var box = element("div", "gm-tip");
    box.appendChild(element("div", "gm-tip-heading", tip.heading));
    if (tip.subtitle) {
      box.appendChild(element("div", "gm-tip-subtitle", tip.subtitle));
    }
    tip.sections.forEach(function (section) {
      if (!section.items.length) {
        return;
      }
      box.appendChild(element("div", "gm-tip-section", section.heading));
      var list = element("ul", "gm-tip-list");
      section.items.forEach(function (item) {
        list.appendChild(element("li", null, item));
      });
      box.appendChild(list);
    });
    return box;
  }

  // Only what vis-network draws goes into its data sets; the full records stay in `data`.
  var NODE_KEYS = ["id", "label", "color", "size", "borderWidth", "shape", "font"];
  var EDGE_KEYS = ["id", "from", "to", "label", "width", "dashes", "color", "font", "arrows",
    "smooth", "selfReference"];

  function drawable(item, keys) {
    var copy = {};
    keys.forEach(function (key) {
      if (item[key] !== undefined) {
        copy[key] = item[key];
      }
    });
    copy.title = tooltipElement(item.tooltip);
    return copy;
  }

  var nodeById = {};
  data.nodes.forEach(function (node) {
    nodeById[node.id] = node;
  });
  var edgeById = {};
  data.edges.forEach(function (edge) {
    edgeById[edge.id] = edge;
  });

  // --- time: every day between the first and the last date the graph holds -------------
  function day(stamp) {
    return stamp ? stamp.slice(0, 10) : null;
  }
  function dayNumber(text) {
    var parts = text.split("-");
    return Date.UTC(+parts[0], +parts[1] - 1, +parts[2]) / DAY_MS;
  }
  function dayText(number) {
    return new Date(number * DAY_MS).toISOString().slice(0, 10);
  }
  var days = [];
  data.nodes.forEach(function (node) {
    days.push(day(node.first_seen));
  });
  data.edges.forEach(function (edge) {
    days.push(day(edge.valid_from), day(edge.first_seen), day(edge.valid_to));
  });
  days = days.filter(function (text) {
    return text && /^\d{4}-\d{2}-\d{2}$/.test(text);
  }).map(dayNumber).filter(isFinite);
  var firstDay = days.length ? Math.min.apply(null, days) : null;
  var lastDay = days.length ? Math.max.apply(null, days) : null;

  // --- the controls' state --------------------------------------------------------------
  var state = {
    coOccurs: false,
    status: "all",
    types: {},
    predicates: {},
    asOf: null, // "YYYY-MM-DD": the graph as it stood at the end of that day
  };
  data.legend.forEach(function (entry) {
    state.types[entry.label] = true;
  });
  data.predicates.forEach(function (entry) {
    state.predicates[entry.predicate] = true;
  });

  function began(stamp, limit) {
    return !stamp || stamp <= limit;
  }

  function edgeShown(edge, shownNodes) {
    if (!shownNodes[edge.from] || !shownNodes[edge.to]) {
      return false;
    }
    if (!edge.typed) {
      return state.coOccurs && statusAndTime(edge);
    }
    return state.predicates[edge.predicate] === true && statusAndTime(edge);
  }

  function statusAndTime(edge) {
    if (state.status === "current" && edge.ended) {
      return false;
    }
    if (state.status === "ended" && !edge.ended) {
      return false;
    }
    if (state.asOf === null) {
      return true;
    }
    var limit = state.asOf + "T23:59:59.999999";
    if (!began(edge.valid_from || edge.first_seen, limit)) {
      return false;
    }
    return !edge.valid_to || limit < edge.valid_to;
  }

  function nodeShown(node) {
    if (state.types[node.group_label] !== true) {
      return false;
    }
    return state.asOf === null || began(node.first_seen, state.asOf + "T23:59:59.999999");
  }

  // --- drawing ----------------------------------------------------------------------------
  var nodes = new vis.DataSet(data.nodes.map(function (n) {
    return drawable(n, NODE_KEYS);
  }));
  var edges = new vis.DataSet(data.edges.map(function (e) {
    var drawn = drawable(e, EDGE_KEYS);
    drawn.hidden = !e.typed; // co-occurrence starts hidden (it still shapes the layout)
    if (!e.typed) {
      drawn.length = 260; // loose springs: co-occurrence groups, typed relations draw
    }
    return drawn;
  }));
  var container = byId("graphmem-network");
  var network = new vis.Network(container, {}, data.options);
  var view = { nodes: [], edges: [] };

  function applyFilters() {
    var shownNodes = {};
    var nodeUpdates = [];
    data.nodes.forEach(function (node) {
      var shown = nodeShown(node);
      if (shown) {
        shownNodes[node.id] = true;
      }
      nodeUpdates.push({ id: node.id, hidden: !shown });
    });
    var edgeUpdates = [];
    var shownEdges = [];
    data.edges.forEach(function (edge) {
      var shown = edgeShown(edge, shownNodes);
      if (shown) {
        shownEdges.push(edge.id);
      }
      edgeUpdates.push({ id: edge.id, hidden: !shown });
    });
    nodes.update(nodeUpdates);
    edges.update(edgeUpdates);
    view = {
      nodes: Object.keys(shownNodes).map(Number),
      edges: shownEdges,
    };
    showSummary();
  }

  function showSummary() {
    var typed = view.edges.filter(function (id) {
      return edgeById[id].typed;
    }).length;
    var text = data.summary.text + " Shown: " + view.nodes.length + " entities, " +
      typed + " typed relations";
    if (state.coOccurs) {
      text += ", " + (view.edges.length - typed) + " co-occurrence links";
    }
    if (state.asOf !== null) {
      text += ", as of " + state.asOf;
    }
    byId("graphmem-summary").textContent = text + ".";
  }

  // --- the legend: types as filters, sizes and widths as the current zoom draws them ------
  var legendList = byId("graphmem-legend-labels");
  data.legend.forEach(function (entry) {
    var row = element("li", "gm-legend-row");
    row.setAttribute("data-label", entry.label);
    var label = element("label", "gm-legend-toggle");
    var box = element("input");
    box.type = "checkbox";
    box.checked = true;
    box.className = "gm-type-filter";
    box.setAttribute("data-label", entry.label);
    box.addEventListener("change", function () {
      state.types[entry.label] = box.checked;
      applyFilters();
    });
    var swatch = element("span", "gm-swatch");
    swatch.style.backgroundColor = entry.color; // from graphmem's palette, never from memory text
    label.appendChild(box);
    label.appendChild(swatch);
    label.appendChild(element("span", "gm-legend-label", entry.label));
    label.appendChild(element("span", "gm-legend-count", entry.count));
    row.appendChild(label);
    legendList.appendChild(row);
  });
  if (data.mentionsCounted) {
    byId("gm-mentions-counted").textContent = "(" + data.mentionsCounted + ")";
  } else {
    byId("gm-mentions-counted").hidden = true;
  }

  var sizeList = byId("gm-size-samples");
  data.sizes.forEach(function (sample) {
    var row = element("li", "gm-sample");
    var dot = element("span", "gm-size-dot");
    dot.setAttribute("data-size", sample.size);
    row.appendChild(element("span", "gm-sample-shape")).appendChild(dot);
    row.appendChild(element("span", null, sample.mentions));
    sizeList.appendChild(row);
  });
  var widthList = byId("gm-width-samples");
  data.widths.forEach(function (sample) {
    var row = element("li", "gm-sample");
    var line = element("span", "gm-width-line");
    line.setAttribute("data-width", sample.width);
    row.appendChild(element("span", "gm-sample-shape")).appendChild(line);
    row.appendChild(element("span", null, sample.support));
    widthList.appendChild(row);
  });

  function scaleLegend() {
    // The samples are drawn at the zoom the graph is drawn at, so they compare one to one.
    var scale = network.getScale();
    sizeList.querySelectorAll(".gm-size-dot").forEach(function (dot) {
      var diameter = 2 * Number(dot.getAttribute("data-size")) * scale;
      dot.style.width = diameter + "px";
      dot.style.height = diameter + "px";
    });
    widthList.querySelectorAll(".gm-width-line").forEach(function (line) {
      line.style.height = Math.max(Number(line.getAttribute("data-width")) * scale, 0.5) + "px";
    });
  }
  network.on("zoom", scaleLegend);

  // --- the toolbar ----------------------------------------------------------------------
  var coToggle = byId("gm-show-cooccurs");
  byId("gm-cooccurs-count").textContent = "(" + data.coOccurs + ")";
  coToggle.disabled = data.coOccurs === 0;
  coToggle.addEventListener("change", function () {
    state.coOccurs = coToggle.checked;
    applyFilters();
  });

  var statusSelect = byId("gm-status");
  statusSelect.addEventListener("change", function () {
    state.status = statusSelect.value;
    applyFilters();
  });

  var predicateList = byId("gm-predicate-list");
  byId("gm-predicates-count").textContent = "(" + data.predicates.length + ")";
  data.predicates.forEach(function (entry) {
    var row = element("li");
    var label = element("label");
    var box = element("input");
    box.type = "checkbox";
    box.checked = true;
    box.className = "gm-predicate-filter";
    box.setAttribute("data-predicate", entry.predicate);
    box.addEventListener("change", function () {
      state.predicates[entry.predicate] = box.checked;
      applyFilters();
    });
    label.appendChild(box);
    label.appendChild(element("span", null, entry.predicate));
    label.appendChild(element("span", "gm-muted", entry.count));
    row.appendChild(label);
    predicateList.appendChild(row);
  });
  function setAllPredicates(checked) {
    predicateList.querySelectorAll("input").forEach(function (box) {
      box.checked = checked;
      state.predicates[box.getAttribute("data-predicate")] = checked;
    });
    applyFilters();
  }
  byId("gm-predicates-all").addEventListener("click", function () {
    setAllPredicates(true);
  });
  byId("gm-predicates-none").addEventListener("click", function () {
    setAllPredicates(false);
  });

  var asOfOn = byId("gm-asof-on");
  var asOfRange = byId("gm-asof");
  var asOfLabel = byId("gm-asof-label");
  if (firstDay === null) {
    asOfOn.disabled = true;
  } else {
    asOfRange.min = "0";
    asOfRange.max = String(lastDay - firstDay);
    asOfRange.value = asOfRange.max;
  }
  function readAsOf() {
    asOfRange.disabled = !asOfOn.checked;
    state.asOf = asOfOn.checked ? dayText(firstDay + Number(asOfRange.value)) : null;
    asOfLabel.textContent = state.asOf === null ? "all time" : state.asOf;
    applyFilters();
  }
  asOfOn.addEventListener("change", readAsOf);
  asOfRange.addEventListener("input", readAsOf);

  // --- search: the named entity is focused, selected and explained -----------------------
  var names = byId("gm-names");
  data.nodes.slice().sort(function (a, b) {
    return a.name.localeCompare(b.name);
  }).forEach(function (node) {
    var option = element("option");
    option.value = node.name;
    names.appendChild(option);
  });
  function findNode(text) {
    var wanted = text.trim().toLowerCase();
    if (!wanted) {
      return null;
    }
    var exact = null;
    var partial = null;
    data.nodes.forEach(function (node) {
      var name = node.name.toLowerCase();
      var aliases = node.aliases.map(function (alias) {
        return alias.toLowerCase();
      });
      if (exact === null && (name === wanted || aliases.indexOf(wanted) >= 0)) {
        exact = node;
      } else if (partial === null && name.indexOf(wanted) >= 0) {
        partial = node;
      }
    });
    return exact || partial;
  }
  var search = byId("gm-search");
  function runSearch() {
    var node = findNode(search.value);
    search.classList.toggle("gm-not-found", node === null && search.value.trim() !== "");
    if (node === null) {
      return;
    }
    if (!nodeShown(node)) {
      // A filtered-out entity is shown again rather than focused invisibly.
      state.types[node.group_label] = true;
      legendList.querySelectorAll("input").forEach(function (box) {
        if (box.getAttribute("data-label") === node.group_label) {
          box.checked = true;
        }
      });
      if (state.asOf !== null) {
        asOfOn.checked = false;
        readAsOf();
      }
      applyFilters();
    }
    network.selectNodes([node.id]);
    showNode(node);
    // Centred in the part of the graph the side panel leaves visible.
    var covered = panel.offsetWidth ? panel.offsetWidth + 14 : 0;
    network.focus(node.id, {
      scale: Math.max(network.getScale(), 1.1),
      offset: { x: -covered / 2, y: 0 },
      animation: false,
    });
    scaleLegend();
    window.graphmemFocused = node.id;
  }
  search.addEventListener("change", runSearch);
  search.addEventListener("keydown", function (event) {
    if (event.key === "Enter") {
      runSearch();
    }
  });

  // --- the side panel -------------------------------------------------------------------
  var panel = byId("gm-panel");
  function fact(list, term, value) {
    if (value === null || value === undefined || value === "") {
      return;
    }
    list.appendChild(element("dt", null, term));
    list.appendChild(element("dd", null, value));
  }
  function fillEvidence(records) {
    var list = byId("gm-panel-evidence");
    list.textContent = "";
    byId("gm-panel-evidence-heading").textContent =
      records.length ? "Evidence (newest first)" : "No evidence sentences";
    records.forEach(function (record) {
      var item = element("li", "gm-evidence");
      item.appendChild(element("q", "gm-evidence-sentence", record.sentence));
      var meta = [];
      if (record.date) {
        meta.push(record.date.slice(0, 16).replace("T", " "));
      }
      if (record.memory_id) {
        meta.push("memory " + record.memory_id);
      }
      if (record.rule) {
        meta.push("rule " + record.rule);
      }
      if (meta.length) {
        item.appendChild(element("div", "gm-evidence-meta", meta.join(" · ")));
      }
      list.appendChild(item);
    });
  }
  function openPanel(kind, id, heading, subtitle) {
    panel.hidden = false;
    panel.setAttribute("data-kind", kind);
    panel.setAttribute("data-id", String(id));
    byId("gm-panel-heading").textContent = heading;
    byId("gm-panel-subtitle").textContent = subtitle;
    var facts = byId("gm-panel-facts");
    facts.textContent = "";
    return facts;
  }
  function showNode(node) {
    var facts = openPanel("node", node.id, node.name, node.group_label);
    fact(facts, "Mentions", node.mentions === null ? null :
      node.mentions + (data.mentionsCounted ? " (" + data.mentionsCounted + ")" : ""));
    fact(facts, "Aliases", node.aliases.filter(function (alias) {
      return alias !== node.name;
    }).join(", "));
    fact(facts, "First seen", node.first_seen && node.first_seen.slice(0, 10));
    fact(facts, "Last seen", node.last_seen && node.last_seen.slice(0, 10));
    fact(facts, "Typed relations", network.getConnectedEdges(node.id).filter(function (id) {
      return edgeById[id].typed;
    }).length);
    fillEvidence(node.evidence);
  }
  function showEdge(edge) {
    var from = nodeById[edge.from];
    var to = nodeById[edge.to];
    var heading = from.name + " " + (edge.typed ? edge.predicate : "co-occurs with") + " " + to.name;
    var status = edge.typed ? (edge.ended ? "ended" : "current") : "mentioned together";
    var facts = openPanel("edge", edge.id, heading, status + (edge.validity ? " · " + edge.validity : ""));
    fact(facts, "Predicate", edge.predicate);
    fact(facts, "Support", edge.support);
    fact(facts, "Confidence", edge.confidence);
    fact(facts, "Valid from", edge.valid_from && edge.valid_from.slice(0, 10));
    fact(facts, "Valid to", edge.valid_to ? edge.valid_to.slice(0, 10) : edge.typed ? "still holds" : null);
    fact(facts, "First seen", edge.first_seen && edge.first_seen.slice(0, 10));
    fact(facts, "Last seen", edge.last_seen && edge.last_seen.slice(0, 10));
    fillEvidence(edge.evidence);
  }
  byId("gm-panel-close").addEventListener("click", function () {
    panel.hidden = true;
  });
  network.on("click", function (params) {
    if (params.nodes.length) {
      showNode(nodeById[params.nodes[0]]);
    } else if (params.edges.length) {
      showEdge(edgeById[params.edges[0]]);
    } else {
      panel.hidden = true;
    }
  });

  // --- the context a task was given (render_context) ------------------------------------
  if (data.context) {
    byId("gm-context").hidden = false;
    byId("gm-context-task").textContent = data.context.task;
    var sections = byId("gm-context-sections");
    data.context.sections.forEach(function (section) {
      sections.appendChild(element("h3", null, section.title));
      var list = element("ul", "gm-context-entries");
      section.entries.forEach(function (entry) {
        var item = element("li", "gm-context-entry");
        item.appendChild(element("div", "gm-context-text", entry.text));
        var why = [];
        if (entry.tier) {
          why.push(entry.tier);
        }
        if (entry.score !== null) {
          why.push("score " + entry.score);
        }
        if (entry.matched.length) {
          why.push("matched: " + entry.matched.join(", "));
        }
        if (entry.path.length) {
          why.push("via " + entry.path.join(" → "));
        }
        if (why.length) {
          item.appendChild(element("div", "gm-context-why", why.join(" · ")));
        }
        list.appendChild(item);
      });
      sections.appendChild(list);
    });
  }

  // --- ready ----------------------------------------------------------------------------
  function markReady(iterations) {
    if (window.graphmemReady) {
      return;
    }
    // Freeze the settled layout: nodes stay where stabilisation put them (still draggable).
    network.setOptions({ physics: { enabled: false } });
    network.fit({ animation: false });
    scaleLegend();
    window.graphmemStats = {
      nodes: nodes.length,
      edges: edges.length,
      nodesTotal: data.summary.nodesTotal,
      nodesOmitted: data.summary.nodesOmitted,
      edgesTotal: data.summary.edgesTotal,
      labels: data.legend.map(function (entry) {
        return entry.label;
      }),
      iterations: iterations,
      readyMs: performance.now(),
      scale: network.getScale(),
    };
    window.graphmemReady = true;
    document.body.setAttribute("data-graphmem-ready", "true");
  }

  window.graphmemNetwork = network;
  window.graphmemNodes = nodes;
  window.graphmemEdges = edges;
  window.graphmemData = data;
  window.graphmemView = function () {
    return { nodes: view.nodes.slice(), edges: view.edges.slice() };
  };
  applyFilters();
  if (nodes.length === 0) {
    markReady(0);
  } else {
    // Listen before the data arrives, so a fast stabilisation cannot finish unobserved.
    network.once("stabilizationIterationsDone", function () {
      markReady(data.options.physics.stabilization.iterations);
    });
    network.setData({ nodes: nodes, edges: edges });
  }
})();
