// The live page: the URL's fragment (which a browser never sends to the server) names what to
// show and carries the tokens: /view#session=ID&token=TOKEN&board=B&board_token=TOKEN. Each
// section is fetched with its bearer token, and fetched again a few seconds after the last
// fetch ended.
const every = 5000;
const params = new URLSearchParams(location.hash.slice(1));
// The tokens are read once: out of the address bar and the history from here on.
history.replaceState(null, '', location.pathname + location.search);
const parts = [];
if (params.get('session')) {
  parts.push({ url: `/v1/sessions/${encodeURIComponent(params.get('session'))}/page`, token: params.get('token') });
}
if (params.get('board')) {
  parts.push({ url: `/v1/boards/${encodeURIComponent(params.get('board'))}/page`, token: params.get('board_token') ?? params.get('token') });
}
const main = document.querySelector('main');
const status = document.getElementById('status');
let shown = '';

async function section({ url, token }) {
  // A section that never answers would stop the refreshes, which wait for it.
  const signal = AbortSignal.timeout(30000);
  const response = await fetch(url, { headers: { authorization: `Bearer ${token ?? ''}` }, cache: 'no-store', signal });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      message = (await response.json()).error.message;
    } catch {}
    throw new Error(`${url}: ${message}`);
  }
  // Each section is a whole page of the server's; its <main> is what goes here.
  const page = new DOMParser().parseFromString(await response.text(), 'text/html');
  return page.querySelector('main')?.innerHTML ?? '';
}

async function refresh() {
  try {
    const html = (await Promise.all(parts.map(section))).join('');
    // Replaced only when it changed, so open details and the scroll position stay.
    if (html !== shown) {
      main.innerHTML = html;
      shown = html;
    }
    status.textContent = `updated ${new Date().toLocaleTimeString()}`;
    status.className = '';
  } catch (e) {
    status.textContent = e.message;
    status.className = 'error';
  }
  document.body.dataset.ready = 'true';
}

if (parts.length === 0) {
  main.innerHTML = '<p class="none">Name what to show after #: session=ID&amp;token=TOKEN, board=B&amp;board_token=TOKEN, or both.</p>';
  status.textContent = 'nothing named';
  document.body.dataset.ready = 'true';
} else {
  // The next refresh starts a while after the last one ended, never beside it: refreshes fired
  // on a fixed beat piled up behind a slow server and came back out of order.
  for (;;) {
    await refresh();
    await new Promise((wake) => setTimeout(wake, every));
  }
}
