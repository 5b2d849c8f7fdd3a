// logbook UI: live updates without a reload, over Server-Sent Events.
//
// The server renders every piece of HTML this script inserts (and escapes
// what came from a transcript there); the script only decides when to
// fetch a fragment and where to put it.
//
//   [data-live-src]    a region re-fetched when its project changes; with
//                      data-live-match="ID ..." only for events of those
//                      sessions (or of sessions whose root is one of them).
//   #timeline          a session's transcript: new entries are fetched
//                      from data-entries-src after data-last-seq and
//                      appended; a tool result moves under its call.
(function () {
  "use strict";

  var project = document.body.dataset.project;
  if (!project || !window.EventSource || !window.fetch) {
    return;
  }
  var status = document.getElementById("live-status");
  var eventTypes = ["session.started", "session.ended", "session.appended", "session.progressed",
    "claim.taken", "claim.released", "claim.expired",
    "message.sent", "message.delivered", "message.read", "message.acked"];
  var debounceMs = 300;

  function setStatus(live) {
    if (!status) {
      return;
    }
    status.hidden = false;
    status.textContent = live ? "live" : "reconnecting…";
    status.className = "live-status " + (live ? "on" : "off");
    document.body.dataset.live = live ? "on" : "off";
  }

  // refresher runs fn at most once at a time, again after it ends when it
  // was asked meanwhile, and never sooner than debounceMs after a request.
  function refresher(fn) {
    var timer = null, running = false, again = false;
    function run() {
      timer = null;
      if (running) {
        again = true;
        return;
      }
      running = true;
      Promise.resolve().then(fn).catch(function () {}).then(function () {
        running = false;
        if (again) {
          again = false;
          request();
        }
      });
    }
    function request() {
      if (timer === null) {
        timer = setTimeout(run, debounceMs);
      }
    }
    return request;
  }

  function get(url) {
    return fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } }).then(function (res) {
      if (!res.ok) {
        throw new Error(res.status + " " + url);
      }
      return res;
    });
  }

  // Regions re-fetched whole.
  var regions = Array.prototype.map.call(document.querySelectorAll("[data-live-src]"), function (el) {
    var match = el.dataset.liveMatch ? el.dataset.liveMatch.split(" ") : null;
    return {
      wants: function (ev) {
        return !match || match.indexOf(ev.session_id) >= 0 || (ev.data && match.indexOf(ev.data.root_id) >= 0);
      },
      refresh: refresher(function () {
        return get(el.dataset.liveSrc).then(function (res) { return res.text(); }).then(function (html) {
          el.innerHTML = html;
        });
      })
    };
  });

  // The transcript, appended to.
  var timeline = document.getElementById("timeline");
  if (timeline && timeline.dataset.entriesSrc) {
    regions.push({
      wants: function (ev) {
        return ev.type === "session.appended" && ev.session_id === timeline.dataset.session &&
          (!ev.data || !ev.data.last_seq || ev.data.last_seq > Number(timeline.dataset.lastSeq));
      },
      refresh: refresher(appendEntries)
    });
  }

  function appendEntries() {
    var url = new URL(timeline.dataset.entriesSrc, location.href);
    url.searchParams.set("after_seq", timeline.dataset.lastSeq);
    return get(url).then(function (res) {
      var last = res.headers.get("X-Last-Seq");
      return res.text().then(function (html) {
        var box = document.createElement("template");
        box.innerHTML = html;
        var atBottom = window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 120;
        var added = null;
        Array.prototype.forEach.call(box.content.querySelectorAll("li.entry"), function (li) {
          if (document.getElementById(li.id)) {
            return;
          }
          if (!pairResult(li)) {
            li.classList.add("fresh");
            timeline.appendChild(li);
            added = li;
          }
        });
        if (last && Number(last) > Number(timeline.dataset.lastSeq)) {
          timeline.dataset.lastSeq = last;
        }
        var empty = document.getElementById("timeline-empty");
        if (empty && timeline.children.length > 0) {
          empty.remove();
        }
        if (added && atBottom) {
          added.scrollIntoView({ block: "end" });
        }
      });
    });
  }

  // pairResult moves a tool result under its call when the call is on the
  // page and has no result yet. It reports whether it did.
  function pairResult(li) {
    var callID = li.dataset.resultFor;
    if (!callID) {
      return false;
    }
    var call = timeline.querySelector('li[data-call-id="' + CSS.escape(callID) + '"]');
    var slot = call && call.querySelector(".result-slot");
    var result = li.querySelector(".result");
    if (!slot || slot.children.length > 0 || !result) {
      return false;
    }
    var state = result.dataset.status || "ok";
    result.className = "result result-" + state;
    var label = result.querySelector(".result-label");
    if (label) {
      label.textContent = "Result";
    }
    slot.appendChild(result);
    var badge = call.querySelector(".badge.call");
    if (badge) {
      badge.textContent = state;
      badge.className = "badge call call-" + state;
    }
    call.classList.add("fresh");
    return true;
  }

  if (regions.length === 0) {
    return;
  }
  var source = new EventSource("/ui/events?project=" + encodeURIComponent(project));
  // A page leaving (or entering the back/forward cache) gives its
  // connection back: browsers allow only a few per server. A page coming
  // back from that cache reloads, to show what happened meanwhile.
  window.addEventListener("pagehide", function () { source.close(); });
  window.addEventListener("pageshow", function (e) {
    if (e.persisted) {
      location.reload();
    }
  });
  source.onopen = function () { setStatus(true); };
  source.onerror = function () { setStatus(false); };
  eventTypes.forEach(function (type) {
    source.addEventListener(type, function (msg) {
      var ev;
      try {
        ev = JSON.parse(msg.data);
      } catch (e) {
        return;
      }
      regions.forEach(function (r) {
        if (r.wants(ev)) {
          r.refresh();
        }
      });
    });
  });
})();
