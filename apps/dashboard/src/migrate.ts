import 'reflect-metadata';
import { runMigrateCommand } from '@meridian/platform-db';
import { dataSourceOptions } from './db/data-source';

runMigrateCommand('dashboard', dataSourceOptions);
