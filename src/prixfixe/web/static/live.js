// Live updates for prixfixe's page: when the server says a report was kept or a record
// changed, fetch that section's fresh HTML (same origin) and put it in place. The page works
// without this; it only saves a reload.
"use strict";
(function () {
  if (!("EventSource" in window) || !window.fetch) {
    return;
  }
  // Which sections each change refreshes: "Needs attention today" reads both.
  var sections = { report: ["report", "attention"], records: ["records", "attention"] };

  function refresh(topic) {
    sections[topic].forEach(function (id) {
      refreshSection(id);
    });
  }

  function refreshSection(id) {
    var section = document.getElementById(id);
    if (!section) {
      return;
    }
    // The records keep the page's sort and filter (its ?sort=...&q=...).
    var query = id === "records" ? window.location.search : "";
    fetch("/fragments/" + id + query, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) {
        if (!response.ok) {
          throw new Error("fragment " + id + ": " + response.status);
        }
        var generation = response.headers.get("X-Generation");
        return response.text().then(function (html) {
          section.innerHTML = html;
          if (generation !== null) {
            section.dataset.generation = generation;
          }
          section.dispatchEvent(new CustomEvent("prixfixe:updated", { bubbles: true }));
        });
      })
      .catch(function () {
        document.body.dataset.live = "off";
      });
  }

  function connect() {
    var source = new EventSource("/events");
    source.addEventListener("open", function () {
      document.body.dataset.live = "on";
    });
    source.addEventListener("error", function () {
      document.body.dataset.live = "off";
    });
    Object.keys(sections).forEach(function (topic) {
      source.addEventListener(topic, function () {
        document.body.dataset.live = "on";
        refresh(topic);
      });
    });
  }

  connect();
})();
