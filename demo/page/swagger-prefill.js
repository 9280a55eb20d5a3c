// Swagger UI add-on, loaded by /docs: `/docs/?compare=<JSON body>` opens POST /retrieve/compare with "Try it out"
// on and that body filled in, ready to Execute. The /demo page links here with the request it sent.
'use strict'
;(function () {
  const raw = new URLSearchParams(location.search).get('compare')
  const original = window.SwaggerUIBundle
  if (!raw || !original) return
  let body
  try {
    body = JSON.stringify(JSON.parse(raw), null, 2)
  } catch {
    return
  }
  const operation = ['operations', 'retrieve', 'post_retrieve_compare']
  // The editor starts from the first named example as it appears; the body goes in after that.
  function fillWhenShown(system) {
    const editor = '#operations-retrieve-post_retrieve_compare textarea.body-param__text'
    const fill = () => system.oas3Actions.setRequestBodyValue({ value: body, pathMethod: ['/retrieve/compare', 'post'] })
    if (document.querySelector(editor)) return fill()
    const observer = new MutationObserver(() => {
      if (!document.querySelector(editor)) return
      observer.disconnect()
      fill()
    })
    observer.observe(document.body, { childList: true, subtree: true })
  }

  function prefillCompare(system) {
    return {
      statePlugins: {
        spec: {
          wrapActions: {
            // Once the document is in, open the operation, turn "Try it out" on and put the body in its editor.
            updateJsonSpec: (next) => (...args) => {
              const result = next(...args)
              setTimeout(() => {
                system.layoutActions.show(operation, true)
                system.layoutActions.show([...operation, 'try-it-out'], true)
                fillWhenShown(system)
              })
              return result
            }
          }
        }
      }
    }
  }
  // The page resolves the document's URL against its own, query string included: resolve it without.
  const base = new URL('./', location.origin + location.pathname)
  window.SwaggerUIBundle = Object.assign(
    (config) => original({
      ...config,
      url: new URL('json', base).href,
      oauth2RedirectUrl: new URL('static/oauth2-redirect.html', base).href,
      plugins: [...(config.plugins || []), prefillCompare]
    }),
    original
  )
})()
