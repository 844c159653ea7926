/** A merchant's page on another origin that uses widget.js with its publishable key and records the callbacks. */
export function merchantPage(svc: string, publishableKey: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Merchant</title></head><body>
<h1>Merchant test shop</h1><button id="buy">Buy</button>
<script src="${svc}/widget.js"></script>
<script>
  window.events = [];
  window.anm = AnmPay(${JSON.stringify(publishableKey)});
  window.openCheckout = function (id) {
    return !!window.anm.open(id, {
      onSuccess: function (p) { window.events.push({ t: 'success', status: p.status, id: p.id }); },
      onCancel: function (i) { window.events.push({ t: 'cancel', status: i.status }); },
      onStatus: function (s) { window.events.push({ t: 'status', status: s.status }); }
    });
  };
</script></body></html>`;
}
