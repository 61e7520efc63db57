/* ProjectWorkTypeLink (time/projectworktypelinks; inner collection time/projects/{id}/worktypelinks): a work type offered on a project. */
import { declareResource, field } from '../declare.js'

export const ProjectWorkTypeLink = declareResource({
  type: 'ProjectWorkTypeLink',
  path: 'time/projectworktypelinks',
  writeRule: 'projectOwner',
  unique: [['project', 'workType']],
  description: 'a work type offered on a project',
  displayName: (rec, context) => context.displayNameOf('WorkType', rec.workType),
  fields: [field.ref('workType', 'WorkType', 'the work type', { required: true }), field.ref('project', 'Project', 'the project (from the path of the inner collection)', { required: true })],
})
