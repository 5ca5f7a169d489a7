// robots.txt disallows /private/: a polite crawler never loads this script,
// so the link it builds is never found.
var a = document.createElement('a');
a.href = '/secret.html';
a.textContent = 'secret';
document.getElementById('app').appendChild(a);
