/* graphmem graph page: draws the JSON in #graphmem-data with vis-network.
 *
 * Every string in the data is untrusted memory content. It reaches the DOM only through
 * textContent (tooltips are DOM elements, never HTML strings), so markup in a memory is shown
 * as text and never parsed.
 */
(function () {
  "use strict";

  var data = JSON.parse(document.getElementById("graphmem-data").textContent);

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

  function withTooltip(item) {
    var copy = Object.assign({}, item);
    copy.title = tooltipElement(item.tooltip);
    delete copy.tooltip;
    return copy;
  }

  document.getElementById("graphmem-summary").textContent = data.summary.text;

  var legendList = document.getElementById("graphmem-legend-labels");
  data.legend.forEach(function (entry) {
    var row = element("li", "gm-legend-row");
    row.setAttribute("data-label", entry.label);
    var swatch = element("span", "gm-swatch");
    swatch.style.backgroundColor = entry.color; // from graphmem's palette, never from memory text
    row.appendChild(swatch);
    row.appendChild(element("span", "gm-legend-label", entry.label));
    row.appendChild(element("span", "gm-legend-count", entry.count));
    legendList.appendChild(row);
  });

  var nodes = new vis.DataSet(data.nodes.map(withTooltip));
  var edges = new vis.DataSet(data.edges.map(withTooltip));
  var container = document.getElementById("graphmem-network");
  var network = new vis.Network(container, {}, data.options);

  function markReady() {
    if (window.graphmemReady) {
      return;
    }
    // Freeze the settled layout: nodes stay where stabilisation put them (still draggable).
    network.setOptions({ physics: { enabled: false } });
    network.fit();
    window.graphmemStats = {
      nodes: nodes.length,
      edges: edges.length,
      nodesTotal: data.summary.nodesTotal,
      nodesOmitted: data.summary.nodesOmitted,
      edgesTotal: data.summary.edgesTotal,
      labels: data.legend.map(function (entry) {
        return entry.label;
      }),
    };
    window.graphmemReady = true;
    document.body.setAttribute("data-graphmem-ready", "true");
  }

  window.graphmemNetwork = network;
  window.graphmemNodes = nodes;
  window.graphmemEdges = edges;
  if (nodes.length === 0) {
    markReady();
  } else {
    // Listen before the data arrives, so a fast stabilisation cannot finish unobserved.
    network.once("stabilizationIterationsDone", markReady);
    network.setData({ nodes: nodes, edges: edges });
  }
})();
