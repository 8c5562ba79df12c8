/** placeholder while the adapter is written */
export {};
