// Builds a page from /api/NAME.json: its heading, its text, and its links.
// The page names itself in <body data-page="NAME">; links listed in the
// page's data-links attribute are built at once, the others after the XHR.
(function () {
  var app = document.getElementById('app');
  function link(href) {
    var a = document.createElement('a');
    a.href = href;
    a.textContent = href;
    var li = document.createElement('li');
    li.appendChild(a);
    app.appendChild(li);
  }
  (document.body.getAttribute('data-links') || '').split(' ').filter(Boolean).forEach(link);
  var xhr = new XMLHttpRequest();
  xhr.open('GET', '/api/' + document.body.getAttribute('data-page') + '.json');
  xhr.onload = function () {
    var d = JSON.parse(xhr.responseText);
    document.title = d.title;
    var h = document.createElement('h1');
    h.textContent = d.title;
    app.appendChild(h);
    var p = document.createElement('p');
    p.textContent = d.text;
    app.appendChild(p);
    d.links.forEach(link);
  };
  xhr.send();
})();
