/* graphmem graph page: draws the JSON in #graphmem-data with vis-network.
 *
 * Every string in the data is untrusted memory content. It reaches the DOM only through
 * textContent (tooltips and the side panel are DOM elements, never HTML strings), so markup in
 * a memory is shown as text and never parsed.
 *
 * One edge is drawn per pair of entities, direction and kind (typed, or co-occurrence); it
 * holds every relation between them. What is drawn is one function of the controls
 * (computeView): a relation passes when its predicate, status (current or ended) and dates
 * (the "as of" day) pass; an edge is drawn when some of its relations pass with the support
 * asked for, its kind is shown, it is core (drawn by default: the ego's relations, or each
 * entity's strongest) or all relations are asked for or one of its entities was expanded, and
 * both its entities are drawn. An entity is drawn when its type, neighbour count and first
 * day pass and it is not held (held entities wait on the page until a neighbour is expanded);
 * with communities on, a community's members are drawn as one node until it is clicked.
 * Labels keep one size on screen and show where they fit (under the dot, or over it), the focus
 * and then the most connected and most mentioned entities first; the first view fits them as
 * well as the dots. The layout is computed once (stabilisation) and then frozen, so filtering
 * never moves anything.
 */
(function () {
  "use strict";

  var data = JSON.parse(document.getElementById("graphmem-data").textContent);
  var DAY_MS = 86400000;
  var DOUBLE_CLICK_MS = 250; // a node's panel waits this long for a second click
  var TOOLTIP_RELATIONS = 6; // relations an edge's tooltip lists (its panel lists them all)
  var FONT_FACE = data.options.nodes.font.face;

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
  var NODE_KEYS = ["id", "label", "color", "size", "borderWidth", "shape", "font", "hidden",
    "physics"];
  var EDGE_KEYS = ["id", "from", "to", "label", "width", "dashes", "color", "font", "arrows",
    "smooth", "selfReference", "hidden", "physics"];

  function drawable(item, keys) {
    var copy = {};
    keys.forEach(function (key) {
      if (item[key] !== undefined) {
        copy[key] = item[key];
      }
    });
    // A placeholder until the pointer first rests on it (see titleOnHover): thousands of
    // tooltips built up front would cost the page its load time.
    copy.title = " ";
    return copy;
  }

  function edgeTooltip(edge) {
    var from = nodeById[edge.from];
    var to = nodeById[edge.to];
    var lines = edge.relations.slice(0, TOOLTIP_RELATIONS).map(function (relation) {
      return (relation.typed ? relation.predicate : "co-occurs") +
        (relation.ended ? " (ended)" : "") + " · support " + relation.support +
        (relation.validity ? " · " + relation.validity : "");
    });
    if (edge.relations.length > TOOLTIP_RELATIONS) {
      lines.push("and " + (edge.relations.length - TOOLTIP_RELATIONS) + " more: click for all");
    }
    var sentences = [];
    edge.relations.forEach(function (relation) {
      relation.evidence.forEach(function (record) {
        if (sentences.length < 3 && sentences.indexOf(record.sentence) < 0) {
          sentences.push(record.sentence);
        }
      });
    });
    var count = edge.relations.length;
    return tooltipElement({
      heading: from.name + (data.options.edges.arrows.to.enabled ? " → " : " — ") + to.name,
      subtitle: count + (count === 1 ? " relation" : " relations") + " · support " + edge.support,
      sections: [
        { heading: "Relations", items: lines },
        { heading: "Evidence", items: sentences },
      ],
    });
  }

  var nodeById = {};
  var edgesOf = {}; // node id -> ids of the edges that touch it
  data.nodes.forEach(function (node) {
    nodeById[node.id] = node;
    edgesOf[node.id] = [];
  });
  var edgeById = {};
  data.edges.forEach(function (edge) {
    edgeById[edge.id] = edge;
    edgesOf[edge.from].push(edge.id);
    if (edge.to !== edge.from) {
      edgesOf[edge.to].push(edge.id);
    }
  });
  var communityOf = {}; // node id -> its community record
  var communityById = {};
  data.communities.forEach(function (community) {
    communityById[community.id] = community;
    community.members.forEach(function (id) {
      communityOf[id] = community;
    });
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
    edge.relations.forEach(function (relation) {
      days.push(day(relation.valid_from), day(relation.first_seen), day(relation.valid_to));
    });
  });
  days = days.filter(function (text) {
    return text && /^\d{4}-\d{2}-\d{2}$/.test(text);
  }).map(dayNumber).filter(isFinite);
  var firstDay = days.length ? Math.min.apply(null, days) : null;
  var lastDay = days.length ? Math.max.apply(null, days) : null;
  var maxDegree = data.nodes.reduce(function (most, node) {
    return Math.max(most, node.degree);
  }, 0);

  // --- the controls' state --------------------------------------------------------------
  var state = {
    coOccurs: data.mode === "ego", // an ego page draws every entity joined to the ego
    allRelations: false, // relations that are not core (among neighbours; not the strongest)
    communities: false,
    status: "all",
    types: {},
    predicates: {},
    minSupport: 1,
    degreeMin: 0,
    degreeMax: maxDegree,
    asOf: null, // "YYYY-MM-DD": the graph as it stood at the end of that day
    expanded: {}, // node id -> true: all its relations and held neighbours drawn
    found: {}, // held node id -> true: drawn because a search named it
    openCommunities: {}, // community id -> true: drawn as its members
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

  function relationShown(relation) {
    if (relation.typed && state.predicates[relation.predicate] !== true) {
      return false;
    }
    if (state.status === "current" && relation.ended) {
      return false;
    }
    if (state.status === "ended" && !relation.ended) {
      return false;
    }
    if (state.asOf === null) {
      return true;
    }
    var limit = state.asOf + "T23:59:59.999999";
    if (!began(relation.valid_from || relation.first_seen, limit)) {
      return false;
    }
    return !relation.valid_to || limit < relation.valid_to;
  }

  function nodePasses(node) {
    if (state.types[node.group_label] !== true) {
      return false;
    }
    if (node.degree < state.degreeMin || node.degree > state.degreeMax) {
      return false;
    }
    return state.asOf === null || began(node.first_seen, state.asOf + "T23:59:59.999999");
  }

  function revealedNodes() {
    var revealed = {};
    Object.keys(state.found).forEach(function (id) {
      revealed[id] = true;
    });
    Object.keys(state.expanded).forEach(function (id) {
      edgesOf[id].forEach(function (edgeId) {
        var edge = edgeById[edgeId];
        revealed[edge.from] = true;
        revealed[edge.to] = true;
      });
    });
    return revealed;
  }

  /* What the controls draw now: node and edge ids, each edge's passing relations, and the
   * communities drawn as one node with the links between them. */
  function computeView() {
    var revealed = revealedNodes();
    var shown = {};
    data.nodes.forEach(function (node) {
      if ((!node.held || revealed[node.id]) && nodePasses(node)) {
        shown[node.id] = true;
      }
    });
    var edgeIds = [];
    var passing = {};
    var waiting = 0; // edges that only the "all relations" toggle keeps back
    data.edges.forEach(function (edge) {
      if (!shown[edge.from] || !shown[edge.to] || (!edge.typed && !state.coOccurs)) {
        return;
      }
      var relations = edge.relations.filter(relationShown);
      var support = relations.reduce(function (sum, r) {
        return sum + r.support;
      }, 0);
      if (!relations.length || support < state.minSupport) {
        return;
      }
      if (!edge.core && !state.allRelations && !state.expanded[edge.from] &&
          !state.expanded[edge.to]) {
        waiting += 1;
        return;
      }
      edgeIds.push(edge.id);
      passing[edge.id] = relations;
    });
    var result = { nodes: [], edges: [], groups: [], links: [], passing: passing, waiting: waiting };
    var representative = {};
    if (state.communities) {
      data.communities.forEach(function (community) {
        if (state.openCommunities[community.id]) {
          return;
        }
        var members = community.members.filter(function (id) {
          return shown[id];
        });
        if (members.length < 2) {
          return;
        }
        members.forEach(function (id) {
          representative[id] = community.id;
        });
        result.groups.push({ id: community.id, members: members });
      });
    }
    Object.keys(shown).forEach(function (id) {
      if (representative[id] === undefined) {
        result.nodes.push(Number(id));
      }
    });
    var links = {};
    edgeIds.forEach(function (id) {
      var edge = edgeById[id];
      var from = representative[edge.from];
      var to = representative[edge.to];
      if (from === undefined && to === undefined) {
        result.edges.push(id);
        return;
      }
      from = from === undefined ? edge.from : from;
      to = to === undefined ? edge.to : to;
      if (from === to) {
        return;
      }
      var key = String(from) < String(to) ? from + "|" + to : to + "|" + from;
      var link = links[key] || (links[key] = { id: "link|" + key, from: from, to: to,
        relations: 0, width: 0 });
      link.relations += passing[id].length;
      link.width = Math.max(link.width, edge.width);
    });
    Object.keys(links).sort().forEach(function (key) {
      result.links.push(links[key]);
    });
    return result;
  }

  // --- drawing ----------------------------------------------------------------------------
  // Held entities, and the edges that touch them, join the data sets when first drawn.
  function drawableEdge(e) {
    var drawn = drawable(e, EDGE_KEYS);
    if (!e.typed) {
      drawn.length = 260; // loose springs: co-occurrence groups, typed relations draw
    }
    return drawn;
  }
  var nodes = new vis.DataSet(data.nodes.filter(function (n) {
    return !n.held;
  }).map(function (n) {
    return drawable(n, NODE_KEYS);
  }));
  var edges = new vis.DataSet(data.edges.filter(function (e) {
    return !e.held;
  }).map(drawableEdge));
  var container = byId("graphmem-network");
  var network = new vis.Network(container, {}, data.options);
  var view = computeView();
  var hoveredEdge = null;
  var layoutDone = false;
  var placed = {}; // held node id -> true once it has a position next to what revealed it

  function edgeLabel(relations) {
    var predicates = [];
    relations.forEach(function (relation) {
      if (relation.typed && predicates.indexOf(relation.predicate) < 0) {
        predicates.push(relation.predicate);
      }
    });
    if (!predicates.length) {
      return "";
    }
    var text = predicates.length <= 2 ? predicates.join(", ") : relations.length + " relations";
    var ended = relations.every(function (relation) {
      return relation.ended;
    });
    return ended ? text + " (ended)" : text;
  }

  function edgeLabelsShown() {
    return view.edges.length + view.links.length <= data.labels.edgesMax;
  }

  function groupRecord(group) {
    var community = communityById[group.id];
    var positions = network.getPositions(group.members);
    var x = 0;
    var y = 0;
    group.members.forEach(function (id) {
      x += positions[id].x / group.members.length;
      y += positions[id].y / group.members.length;
    });
    var first = nodeById[community.members[0]];
    return {
      id: group.id,
      label: community.label,
      x: x,
      y: y,
      physics: false,
      size: Math.min(14 + 3 * Math.sqrt(group.members.length) * 2, 48),
      borderWidth: 3,
      shapeProperties: { borderDashes: [4, 3] },
      color: { background: "#ffffff", border: first.color.background,
        highlight: { background: "#f7f8fa", border: "#1f2933" },
        hover: { background: "#f7f8fa", border: "#1f2933" } },
      title: tooltipElement({
        heading: community.label,
        subtitle: group.members.length + " entities · click to draw them",
        sections: [{ heading: "Largest", items: community.names }],
      }),
    };
  }

  function applyFilters() {
    view = computeView();
    var nodeShown = {};
    view.nodes.forEach(function (id) {
      nodeShown[id] = true;
    });
    var nodeUpdates = [];
    data.nodes.forEach(function (node) {
      if (node.held && !placed[node.id]) {
        if (!nodeShown[node.id]) {
          return; // not in the data set yet
        }
        nodes.add(Object.assign(drawable(node, NODE_KEYS), placeNear(node.id),
          { hidden: false, physics: false }));
      }
      changed(nodeUpdates, drawnNodes, { id: node.id, hidden: !nodeShown[node.id] });
    });
    nodes.update(nodeUpdates);
    var groupIds = {};
    view.groups.forEach(function (group) {
      groupIds[group.id] = true;
    });
    nodes.remove(nodes.getIds({ filter: function (n) {
      return typeof n.id === "string" && !groupIds[n.id];
    } }));
    view.groups.forEach(function (group) {
      delete labelShown[group.id]; // drawn again with its label: placeLabels decides
    });
    nodes.update(view.groups.map(groupRecord));

    var labels = edgeLabelsShown();
    var edgeShown = {};
    view.edges.forEach(function (id) {
      edgeShown[id] = true;
    });
    var edgeUpdates = [];
    data.edges.forEach(function (edge) {
      if (edge.held && !drawnEdges[edge.id]) {
        if (!edgeShown[edge.id]) {
          return; // not in the data set yet
        }
        edges.add(Object.assign(drawableEdge(edge), { physics: false }));
      }
      var text = edgeShown[edge.id] ? edgeLabel(view.passing[edge.id]) : "";
      changed(edgeUpdates, drawnEdges, { id: edge.id, hidden: !edgeShown[edge.id],
        label: labels || hoveredEdge === edge.id ? text : "" });
    });
    edges.update(edgeUpdates);
    edges.remove(edges.getIds({ filter: function (e) {
      return typeof e.id === "string";
    } }));
    edges.add(view.links.map(function (link) {
      return { id: link.id, from: link.from, to: link.to, width: link.width, physics: false,
        color: data.looks.normal, dashes: [6, 4], label: labels ? link.relations + " relations" : "",
        title: tooltipElement({ heading: link.relations + " relations", subtitle: "", sections: [] }) };
    }));
    placeLabels();
    showSummary();
  }

  /* Queue `update` unless the data set already holds it (updates cost a redraw each). */
  var drawnNodes = {};
  var drawnEdges = {};
  function changed(updates, drawn, update) {
    var last = drawn[update.id];
    if (!last || last.hidden !== update.hidden || last.label !== update.label) {
      drawn[update.id] = update;
      updates.push(update);
    }
  }

  /* A held node is drawn next to the first drawn neighbour that revealed it, on a ring. */
  function placeNear(id) {
    var anchor = null;
    edgesOf[id].some(function (edgeId) {
      var edge = edgeById[edgeId];
      var other = edge.from === id ? edge.to : edge.from;
      if (!nodeById[other].held || placed[other]) {
        anchor = other;
        return true;
      }
      return false;
    });
    placed[id] = true;
    var centre = anchor === null ? { x: 0, y: 0 } : network.getPosition(anchor);
    var count = (rings[anchor] || 0) + 1;
    rings[anchor] = count;
    var angle = count * 2.399963; // the golden angle: a spiral without collisions
    var radius = 110 + 22 * Math.sqrt(count);
    return { x: centre.x + radius * Math.cos(angle), y: centre.y + radius * Math.sin(angle) };
  }
  var rings = {}; // node id -> how many held nodes were placed around it

  // --- labels that do not collide ---------------------------------------------------------
  var measure = document.createElement("canvas").getContext("2d");
  var labelShown = {}; // id -> where its label is ("below", or "above@<zoom>"), or false
  var labelScale = 1; // the zoom the label font sizes were set for
  var LABEL_GAP = 4; // canvas units between a dot and its label (vis-network's, below)
  var LABEL_PLACES = ["below", "above"];
  function labelText(id) {
    return typeof id === "string" ? communityById[id].label : nodeById[id].label;
  }
  /* An entity's place among the page's entities by neighbours and by mentions (ties by the
   * other count): its label ranks by the better of the two, so the most connected and the
   * most mentioned entities are named before the rest. */
  var labelPlace = {};
  (function () {
    function order(first, second) {
      return data.nodes.slice().sort(function (a, b) {
        return (b[first] || 0) - (a[first] || 0) || (b[second] || 0) - (a[second] || 0) ||
          a.id - b.id;
      });
    }
    order("degree", "mentions").forEach(function (node, place) {
      labelPlace[node.id] = [place];
    });
    order("mentions", "degree").forEach(function (node, place) {
      var places = labelPlace[node.id];
      labelPlace[node.id] = [Math.min(places[0], place), Math.max(places[0], place)];
    });
  })();
  function labelRank(id) {
    if (typeof id === "string") {
      return [0, -communityById[id].members.length];
    }
    var places = labelPlace[id];
    return [nodeById[id].focus ? -1 : 1, places[0], places[1], id];
  }
  function byRank(a, b) {
    var ra = labelRank(a);
    var rb = labelRank(b);
    for (var i = 0; i < Math.min(ra.length, rb.length); i += 1) {
      if (ra[i] !== rb[i]) {
        return ra[i] < rb[i] ? -1 : 1;
      }
    }
    return 0;
  }

  /* The screen box (DOM pixels) a label takes below or above its dot, with the gap to the
   * dot: vis-network hangs a dot's label 4 canvas units + half a line under it; above, the
   * label is moved up by its font's vadjust (labelShift). */
  function labelBox(dot, half, place, scale, px) {
    var box = { left: dot.x - half, right: dot.x + half, place: place };
    if (place === "below") {
      box.top = dot.y + dot.r;
      box.bottom = box.top + LABEL_GAP * scale + 1.9 * px;
    } else {
      box.bottom = dot.y - dot.r;
      box.top = box.bottom - LABEL_GAP * scale - 1.65 * px;
    }
    return box;
  }
  /* Canvas units to move a label from below its dot (radius in canvas units) to above it. */
  function labelShift(place, radius, scale) {
    var font = data.labels.nodePx / scale;
    return place === "above" ? -(2 * radius + 2 * LABEL_GAP + 1.75 * font) : 0;
  }
  function apart(a, b) {
    return a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top;
  }
  /* Whether the box comes within LABEL_CLEARANCE screen pixels of the dot. */
  var LABEL_CLEARANCE = 3;
  function covers(box, dot) {
    var x = Math.max(box.left, Math.min(dot.x, box.right));
    var y = Math.max(box.top, Math.min(dot.y, box.bottom));
    var reach = dot.r + LABEL_CLEARANCE;
    return (x - dot.x) * (x - dot.x) + (y - dot.y) * (y - dot.y) < reach * reach;
  }

  /* Keep labels data.labels.nodePx high on screen and show each one that fits inside the graph
   * beside the ones already placed (focus first, then communities, then the most connected and
   * most mentioned entities): under its dot clear of the other dots, else over it clear of
   * them (so that it reads as this dot's), else under it. `unbounded`: labels may reach past
   * the graph's box (fitLabels). Returns each dot drawn, with its label's box (DOM pixels). */
  function placeLabels(unbounded) {
    if (!window.graphmemReady && !layoutDone) {
      return []; // nothing has a position yet
    }
    var scale = network.getScale();
    var px = data.labels.nodePx;
    if (scale !== labelScale) {
      labelScale = scale; // a new font size makes vis-network measure every label again
      network.setOptions({
        nodes: { font: { size: px / scale } },
        edges: { font: { size: data.labels.edgePx / scale } },
      });
    }
    measure.font = px + "px " + FONT_FACE;
    var width = container.clientWidth;
    var height = container.clientHeight;
    var ids = view.nodes.concat(view.groups.map(function (group) {
      return group.id;
    })).sort(byRank);
    var positions = network.getPositions(ids);
    var dots = ids.map(function (id) {
      var centre = network.canvasToDOM(positions[id]);
      var size = nodes.get(id).size || 10;
      return { id: id, x: centre.x, y: centre.y, r: size * scale, size: size, label: null };
    });
    var boxes = [];
    var updates = [];
    dots.forEach(function (dot) {
      var text = labelText(dot.id);
      var half = text ? measure.measureText(text).width / 2 + 4 : 0; // + the white stroke
      var free = LABEL_PLACES.map(function (place) {
        return labelBox(dot, half, place, scale, px);
      }).filter(function (box) {
        var inside = unbounded === true || (box.left >= 0 && box.right <= width &&
          box.top >= 0 && box.bottom <= height);
        return text && inside && boxes.every(function (other) {
          return apart(box, other);
        });
      });
      var clear = free.filter(function (box) {
        return dots.every(function (other) {
          return other === dot || !covers(box, other);
        });
      });
      var below = free[0] && free[0].place === "below" ? free[0] : null;
      var box = clear[0] || below;
      var place = box ? box.place : false;
      if (box) {
        boxes.push(box);
        dot.label = box;
      }
      // A label over its dot is moved up by an amount that depends on the zoom.
      var shown = place === "above" ? place + "@" + scale : place;
      if (labelShown[dot.id] !== shown) {
        labelShown[dot.id] = shown;
        updates.push({ id: dot.id, label: box ? text : "",
          font: { vadjust: labelShift(place, dot.size, scale) } });
      }
    });
    nodes.update(updates);
    window.graphmemLabelsShown = boxes.length;
    return dots;
  }
  var labelTimer = null;
  function placeLabelsSoon() {
    clearTimeout(labelTimer);
    labelTimer = setTimeout(placeLabels, 80);
  }

  /* The largest zoom, from the current one down to LEAST_FIT of it, at which every dot and
   * every label placed fits in the graph's box (labels keep their size on screen, so a view
   * fitted to the dots cuts off the labels at its edges); the view moves there, centred, and
   * the labels are placed again, inside the box. */
  var LEAST_FIT = 0.7;
  function fitLabels() {
    var margin = 6;
    var width = container.clientWidth - 2 * margin;
    var height = container.clientHeight - 2 * margin;
    var least = network.getScale() * LEAST_FIT;
    for (var round = 0; round < 3; round += 1) {
      var dots = placeLabels(true);
      if (!dots.length || width <= 0 || height <= 0) {
        return;
      }
      var scale = network.getScale();
      var centre = network.DOMtoCanvas({ x: 0, y: 0 }); // any point: positions are relative
      var items = dots.map(function (dot) {
        var canvas = network.DOMtoCanvas({ x: dot.x, y: dot.y });
        var box = dot.label;
        return { x: canvas.x - centre.x, y: canvas.y - centre.y, r: dot.size,
          half: box ? (box.right - box.left) / 2 : 0,
          up: box && box.place === "above" ? box.bottom - box.top : 0,
          down: box && box.place === "below" ? box.bottom - box.top : 0 };
      });
      var extents = function (s) {
        var e = { left: Infinity, right: -Infinity, top: Infinity, bottom: -Infinity };
        items.forEach(function (item) {
          var across = Math.max(item.r * s, item.half);
          e.left = Math.min(e.left, item.x * s - across);
          e.right = Math.max(e.right, item.x * s + across);
          e.top = Math.min(e.top, item.y * s - item.r * s - item.up);
          e.bottom = Math.max(e.bottom, item.y * s + item.r * s + item.down);
        });
        return e;
      };
      var fits = function (s) {
        var e = extents(s);
        return e.right - e.left <= width && e.bottom - e.top <= height;
      };
      var best = scale;
      if (!fits(scale)) {
        var low = Math.min(least, scale);
        var high = scale;
        for (var step = 0; step < 24; step += 1) {
          var middle = (low + high) / 2;
          if (fits(middle)) {
            low = middle;
          } else {
            high = middle;
          }
        }
        best = low;
      }
      var e = extents(best);
      network.moveTo({
        position: { x: centre.x + (e.left + e.right) / 2 / best,
          y: centre.y + (e.top + e.bottom) / 2 / best },
        scale: best,
        animation: false,
      });
      if (best === scale) {
        break; // only centred: the labels placed still fit
      }
    }
    placeLabels();
  }

  function showSummary() {
    var typed = 0;
    var coOccurring = 0;
    view.edges.forEach(function (id) {
      if (edgeById[id].typed) {
        typed += view.passing[id].length;
      } else {
        coOccurring += 1;
      }
    });
    var count = view.nodes.length + view.groups.reduce(function (sum, group) {
      return sum + group.members.length;
    }, 0);
    var text = data.summary.text + " Shown: " + count + " entities";
    if (view.groups.length) {
      text += " (" + view.groups.length + " communities drawn as one node each: click one to draw it)";
    }
    text += ", " + typed + " typed relations";
    if (state.coOccurs) {
      text += ", " + coOccurring + " co-occurrence links";
    }
    if (state.asOf !== null) {
      text += ", as of " + state.asOf;
    }
    if (view.waiting) {
      text += "; " + view.waiting + " more edges behind “" + allRelationsText + "”";
    }
    byId("graphmem-summary").textContent = text + ".";
  }

  // --- filter lists: one checkbox per entity type and per predicate -----------------------
  /* One row per entry: a checkbox (class boxClass, attribute `data-<name>`), an optional
   * swatch, the entry's text and its count; `onChange(value, checked)` on each change. */
  function checkboxList(list, entries, spec) {
    entries.forEach(function (entry) {
      var value = entry[spec.name];
      var row = element("li", spec.rowClass);
      row.setAttribute("data-" + spec.name, value);
      var label = element("label", spec.labelClass);
      var box = element("input");
      box.type = "checkbox";
      box.checked = true;
      box.className = spec.boxClass;
      box.setAttribute("data-" + spec.name, value);
      box.addEventListener("change", function () {
        spec.onChange(value, box.checked);
      });
      label.appendChild(box);
      if (entry.color) {
        var swatch = element("span", "gm-swatch");
        swatch.style.backgroundColor = entry.color; // graphmem's palette, never memory text
        label.appendChild(swatch);
      }
      label.appendChild(element("span", spec.textClass, value));
      label.appendChild(element("span", spec.countClass, entry.count));
      row.appendChild(label);
      list.appendChild(row);
    });
  }

  var legendList = byId("graphmem-legend-labels");
  checkboxList(legendList, data.legend, {
    name: "label", rowClass: "gm-legend-row", labelClass: "gm-legend-toggle",
    boxClass: "gm-type-filter", textClass: "gm-legend-label", countClass: "gm-legend-count",
    onChange: function (value, checked) {
      state.types[value] = checked;
      applyFilters();
    },
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
  network.on("zoom", function () {
    scaleLegend();
    placeLabelsSoon();
  });
  network.on("dragEnd", placeLabelsSoon);
  network.on("resize", placeLabelsSoon);

  // --- the toolbar ----------------------------------------------------------------------
  function toggle(id, onChange) {
    var box = byId(id);
    box.addEventListener("change", function () {
      onChange(box.checked);
      applyFilters();
    });
    return box;
  }
  var coToggle = toggle("gm-show-cooccurs", function (checked) {
    state.coOccurs = checked;
  });
  byId("gm-cooccurs-count").textContent = "(" + data.coOccurs + ")";
  coToggle.disabled = data.coOccurs === 0;
  coToggle.checked = state.coOccurs;

  var allRelationsText = data.mode === "ego" ? "Relations among neighbours" :
    "All relations, not only each entity's " + data.strongestPerEntity + " strongest";
  byId("gm-all-relations-label").textContent = allRelationsText;
  var waitingAtStart = data.edges.filter(function (edge) {
    return !edge.core && !edge.held && edge.typed; // co-occurrence waits on its own toggle
  }).length;
  byId("gm-all-relations-count").textContent = "(" + waitingAtStart + ")";
  var allToggle = toggle("gm-all-relations", function (checked) {
    state.allRelations = checked;
  });
  allToggle.disabled = waitingAtStart === 0;

  var communityToggle = toggle("gm-communities", function (checked) {
    state.communities = checked;
    state.openCommunities = {};
  });
  byId("gm-communities-count").textContent = "(" + data.communities.length + ")";
  communityToggle.disabled = data.communities.length === 0;

  function numberInput(id, initial, onValue) {
    var input = byId(id);
    input.value = String(initial);
    input.addEventListener("input", function () {
      var value = Number(input.value);
      if (input.value !== "" && isFinite(value)) {
        onValue(value);
        applyFilters();
      }
    });
    return input;
  }
  numberInput("gm-min-support", 1, function (value) {
    state.minSupport = value;
  });
  numberInput("gm-degree-min", 0, function (value) {
    state.degreeMin = value;
  });
  numberInput("gm-degree-max", maxDegree, function (value) {
    state.degreeMax = value;
  }).max = String(maxDegree);

  var statusSelect = byId("gm-status");
  statusSelect.addEventListener("change", function () {
    state.status = statusSelect.value;
    applyFilters();
  });

  var predicateList = byId("gm-predicate-list");
  var predicateMenu = byId("gm-predicates");
  predicateMenu.addEventListener("toggle", function () {
    // Near the window's right edge the list opens to the left, inside the window.
    predicateMenu.classList.remove("gm-open-left");
    if (predicateMenu.open && predicateList.getBoundingClientRect().right > window.innerWidth) {
      predicateMenu.classList.add("gm-open-left");
    }
  });
  byId("gm-predicates-count").textContent = "(" + data.predicates.length + ")";
  checkboxList(predicateList, data.predicates, {
    name: "predicate", boxClass: "gm-predicate-filter", countClass: "gm-muted",
    onChange: function (value, checked) {
      state.predicates[value] = checked;
      applyFilters();
    },
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

  // --- expanding: a node's held neighbours and all its relations, from the page's data ----
  function heldNeighbours(id) {
    var found = {};
    edgesOf[id].forEach(function (edgeId) {
      var edge = edgeById[edgeId];
      var other = edge.from === id ? edge.to : edge.from;
      if (nodeById[other].held && !found[other]) {
        found[other] = true;
      }
    });
    return Object.keys(found).length;
  }
  function expand(id) {
    state.expanded[id] = true;
    applyFilters();
    showNode(nodeById[id]);
  }

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
  function isDrawn(id) {
    return view.nodes.indexOf(id) >= 0;
  }
  function runSearch() {
    var node = findNode(search.value);
    search.classList.toggle("gm-not-found", node === null && search.value.trim() !== "");
    if (node === null) {
      return;
    }
    if (!isDrawn(node.id)) {
      // A filtered-out, held or grouped entity is drawn rather than focused invisibly.
      state.types[node.group_label] = true;
      legendList.querySelectorAll("input").forEach(function (box) {
        if (box.getAttribute("data-label") === node.group_label) {
          box.checked = true;
        }
      });
      if (node.held) {
        state.found[node.id] = true;
      }
      if (communityOf[node.id]) {
        state.openCommunities[communityOf[node.id].id] = true;
      }
      state.degreeMin = Math.min(state.degreeMin, node.degree);
      state.degreeMax = Math.max(state.degreeMax, node.degree);
      byId("gm-degree-min").value = String(state.degreeMin);
      byId("gm-degree-max").value = String(state.degreeMax);
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
    placeLabels();
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
  function evidenceList(list, records) {
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
  function fillEvidence(records) {
    var list = byId("gm-panel-evidence");
    list.textContent = "";
    byId("gm-panel-evidence-heading").hidden = false;
    byId("gm-panel-evidence-heading").textContent =
      records.length ? "Evidence (newest first)" : "No evidence sentences";
    evidenceList(list, records);
  }
  function openPanel(kind, id, heading, subtitle) {
    panel.hidden = false;
    panel.setAttribute("data-kind", kind);
    panel.setAttribute("data-id", String(id));
    byId("gm-panel-heading").textContent = heading;
    byId("gm-panel-subtitle").textContent = subtitle;
    byId("gm-panel-relations").textContent = "";
    byId("gm-panel-evidence").textContent = "";
    byId("gm-panel-evidence-heading").hidden = true;
    byId("gm-panel-expand").hidden = true;
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
    fact(facts, "Typed relations", edgesOf[node.id].reduce(function (sum, id) {
      return sum + (edgeById[id].typed ? edgeById[id].relations.length : 0);
    }, 0));
    fact(facts, "Neighbours", node.degree);
    if (!state.expanded[node.id]) {
      var held = heldNeighbours(node.id);
      var button = byId("gm-panel-expand");
      button.hidden = false;
      button.textContent = held ? "Expand: draw " + held + " more neighbours and all its relations" :
        "Expand: draw all its relations";
    }
    fillEvidence(node.evidence);
  }
  function relationRow(relation) {
    var row = element("li", "gm-relation");
    row.appendChild(element("div", "gm-relation-heading", relation.typed ?
      relation.predicate + (relation.ended ? " (ended)" : "") : "co-occurs"));
    var facts = element("dl", "gm-panel-facts");
    fact(facts, "Support", relation.support);
    fact(facts, "Confidence", relation.confidence);
    fact(facts, "Valid from", relation.valid_from && relation.valid_from.slice(0, 10));
    fact(facts, "Valid to", relation.valid_to ? relation.valid_to.slice(0, 10) :
      relation.typed ? "still holds" : null);
    fact(facts, "First seen", relation.first_seen && relation.first_seen.slice(0, 10));
    fact(facts, "Last seen", relation.last_seen && relation.last_seen.slice(0, 10));
    row.appendChild(facts);
    var list = element("ol", "gm-panel-evidence");
    evidenceList(list, relation.evidence);
    if (!relation.evidence.length) {
      row.appendChild(element("div", "gm-evidence-meta", "No evidence sentences"));
    }
    row.appendChild(list);
    return row;
  }
  function showEdge(edge) {
    var from = nodeById[edge.from];
    var to = nodeById[edge.to];
    var heading;
    var subtitle;
    if (edge.relations.length === 1) {
      var only = edge.relations[0];
      heading = from.name + " " + (edge.typed ? only.predicate : "co-occurs with") + " " + to.name;
      subtitle = (edge.typed ? (only.ended ? "ended" : "current") : "mentioned together") +
        (only.validity ? " · " + only.validity : "");
    } else {
      heading = from.name + (edge.typed ? " → " : " co-occurs with ") + to.name;
      subtitle = edge.relations.length + " relations · support " + edge.support;
    }
    openPanel("edge", edge.id, heading, subtitle);
    var list = byId("gm-panel-relations");
    edge.relations.forEach(function (relation) {
      list.appendChild(relationRow(relation));
    });
  }
  byId("gm-panel-close").addEventListener("click", function () {
    panel.hidden = true;
  });
  byId("gm-panel-expand").addEventListener("click", function () {
    expand(Number(panel.getAttribute("data-id")));
  });
  network.on("click", function (params) {
    var id = params.nodes.length ? params.nodes[0] : null;
    if (typeof id === "string") {
      state.openCommunities[id] = true; // a community: draw its members
      applyFilters();
    } else if (id !== null) {
      // A moment later: the panel must not open under the second click of a double-click.
      clearTimeout(pendingPanel);
      pendingPanel = setTimeout(function () {
        showNode(nodeById[id]);
      }, DOUBLE_CLICK_MS);
    } else if (params.edges.length && edgeById[params.edges[0]]) {
      showEdge(edgeById[params.edges[0]]);
    } else {
      panel.hidden = true;
    }
  });
  // The browser's own double-click (vis-network's touch library misses fast ones).
  container.addEventListener("dblclick", function (event) {
    var frame = container.getBoundingClientRect();
    var id = network.getNodeAt({ x: event.clientX - frame.left, y: event.clientY - frame.top });
    if (typeof id === "number") {
      clearTimeout(pendingPanel);
      expand(id);
    }
  });
  var pendingPanel = null;
  /* Build an item's tooltip the first time the pointer rests on it (vis-network reads the
   * title when its tooltip delay has passed, after this event). */
  var titled = {};
  function titleOnHover(set, kind, id, build) {
    if (!titled[kind + id]) {
      titled[kind + id] = true;
      set.update({ id: id, title: build() });
    }
  }
  network.on("hoverNode", function (params) {
    var id = params.node;
    if (typeof id === "number") {
      titleOnHover(nodes, "node:", id, function () {
        return tooltipElement(nodeById[id].tooltip);
      });
    }
  });
  network.on("hoverEdge", function (params) {
    hoveredEdge = params.edge;
    if (edgeById[params.edge]) {
      titleOnHover(edges, "edge:", params.edge, function () {
        return edgeTooltip(edgeById[params.edge]);
      });
    }
    if (!edgeLabelsShown() && view.passing[params.edge]) {
      edges.update({ id: params.edge, label: edgeLabel(view.passing[params.edge]) });
    }
  });
  network.on("blurEdge", function (params) {
    hoveredEdge = null;
    if (!edgeLabelsShown() && edgeById[params.edge]) {
      edges.update({ id: params.edge, label: "" });
    }
  });

  // --- the context a task was given (render_context) ------------------------------------
  if (data.context) {
    byId("gm-context").hidden = false;
    byId("gm-side").classList.add("gm-with-context");
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
    layoutDone = true;
    applyFilters();
    fitLabels();
    scaleLegend();
    window.graphmemStats = {
      nodes: view.nodes.length,
      edges: view.edges.length,
      nodesOnPage: data.nodes.length,
      edgesOnPage: data.edges.length,
      nodesTotal: data.summary.nodesTotal,
      nodesOmitted: data.summary.nodesOmitted,
      nodesHeld: data.summary.nodesHeld,
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
    return {
      nodes: view.nodes.slice(),
      edges: view.edges.slice(),
      groups: view.groups.map(function (group) {
        return { id: group.id, members: group.members.slice() };
      }),
      links: view.links.map(function (link) {
        return { id: link.id, from: link.from, to: link.to, relations: link.relations };
      }),
    };
  };
  applyFilters();
  if (data.nodes.length === 0) {
    markReady(0);
  } else {
    // Listen before the data arrives, so a fast stabilisation cannot finish unobserved.
    network.once("stabilizationIterationsDone", function () {
      markReady(data.options.physics.stabilization.iterations);
    });
    network.setData({ nodes: nodes, edges: edges });
  }
})();
