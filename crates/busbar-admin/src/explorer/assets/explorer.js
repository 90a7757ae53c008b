// The Busbar explorer's only script: live counts. Every element with data-count="PATH|FIELD"
// shows FIELD of entity PATH; the page's data-counts-url is polled every two seconds.
(function () {
  "use strict";
  var source = document.body.getAttribute("data-counts-url");
  if (!source) { return; }
  function refresh() {
    fetch(source, { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (answer) {
        if (!answer) { return; }
        answer.entities.forEach(function (entity) {
          ["active", "deadLetter", "scheduled", "deferred"].forEach(function (field) {
            var selector = '[data-count="' + CSS.escape(entity.path + "|" + field) + '"]';
            document.querySelectorAll(selector).forEach(function (cell) {
              cell.textContent = String(entity[field]);
            });
          });
        });
      })
      .catch(function () { /* the broker may be restarting: try again next time */ });
  }
  setInterval(refresh, 2000);
})();
