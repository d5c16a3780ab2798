"""Files in and out: resources, schemas, the eight task files, the output contract, importers, the catalog."""
