// Starts Swagger UI on the docs page. A file of its own (not an inline script) so the page's
// Content-Security-Policy can allow scripts from this origin only.
window.addEventListener('load', function () {
  var root = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: root.getAttribute('data-spec-url'),
    domNode: root,
    deepLinking: true,
    // Nothing leaves this origin: no validator badge from the public validator service.
    validatorUrl: null,
    tryItOutEnabled: false,
    persistAuthorization: false,
    displayRequestDuration: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
