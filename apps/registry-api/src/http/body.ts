/** Largest JSON request body accepted (publish and owner actions take small ones; anything bigger is a 413). */
export const JSON_BODY_LIMIT = '16kb';
